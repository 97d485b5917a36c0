// What every chat provider's end-to-end test stands on: a fresh strict fake Messages API and fake platform
// per test, a temp dir for the database, and the providers a test started, stopped with their harnesses after it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { startHarness, type Harness, type HarnessOptions } from "./harness.js";

/** Registers its hooks when constructed, at the top of a test file; its fakes are new for each test. */
export class ProviderWorld<Platform extends { close(): Promise<void> }, Bot extends { stop(): Promise<void> }> {
  /** This test's fake Messages API. */
  model!: FakeAnthropic;
  protected platform!: Platform;
  private dir = "";
  private running: Array<{ h: Harness; bot: Bot }> = [];

  constructor(startPlatform: () => Promise<Platform>, dirPrefix: string) {
    beforeEach(async () => {
      this.model = await startFakeAnthropic();
      this.platform = await startPlatform();
      this.dir = mkdtempSync(join(tmpdir(), dirPrefix));
      this.running = [];
    });
    afterEach(async () => {
      await this.stopProviders();
      await this.platform.close();
      await this.model.close();
      rmSync(this.dir, { recursive: true, force: true });
    });
  }

  /** Stops every provider started so far and closes its harness, as a restart or the end of a test does. */
  async stopProviders(): Promise<void> {
    for (const { h, bot } of this.running) {
      await bot.stop();
      await h.close();
    }
    this.running = [];
  }

  /** A harness on this test's fake model and database file (the same file again after a restart). */
  protected harness(options: HarnessOptions): Promise<Harness> {
    return startHarness({ ...options, fake: this.model, dbFile: join(this.dir, "switchboard.db") });
  }

  /** Stops the provider and closes its harness after the test, unless `stopProviders` did before. */
  protected started(h: Harness, bot: Bot): void {
    this.running.push({ h, bot });
  }
}
