// The Store contract (./contract/suite.ts) on sqlite.
import { storeContract } from "./contract/suite.js";

storeContract("sqlite");
