// The Store contract (./contract/suite.ts) on sqlite, exclusive, through the holder's cache.
import { storeContract } from "./contract/suite.js";

storeContract("sqlite, exclusive, through the holder's cache");
