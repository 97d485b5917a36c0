// The Store contract (./contract/suite.ts) on postgres, through the holder's cache.
import { storeContract } from "./contract/suite.js";

storeContract("postgres, through the holder's cache");
