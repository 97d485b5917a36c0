// The Store contract (./contract/suite.ts) on postgres.
import { storeContract } from "./contract/suite.js";

storeContract("postgres");
