// The Store contract (./contract/suite.ts) on sqlite, exclusive.
import { storeContract } from "./contract/suite.js";

storeContract("sqlite, exclusive");
