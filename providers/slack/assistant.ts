// Slack's AI-assistant threads, handled the way Bolt's `Assistant` class does (src/Assistant.ts): on
// `assistant_thread_started` the app greets in the new thread (Bolt's `say`, with the thread context as message
// metadata when Slack sent one) and offers suggested prompts (`assistant.threads.setSuggestedPrompts`). The user's
// messages in the thread are ordinary `message.im` events with `thread_ts`: one conversation per thread.
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { RecentSet } from "./inbound.js";

export const GREETING = "Hi! I'm Switchboard. Tell me what you need; type `cancel` to stop a running task.";
export const PROMPTS_TITLE = "Try one of these:";
export const SUGGESTED_PROMPTS = [
  { title: "What can you do?", message: "What can you do? Which skills and agents can you use?" },
  { title: "Plan something with me", message: "Help me plan something step by step." },
];

export interface AssistantThreadStarted {
  assistant_thread: {
    user_id: string;
    channel_id: string;
    thread_ts: string;
    context?: { channel_id?: string; team_id?: string; enterprise_id?: string | null };
  };
}

export class AssistantThreads {
  /** Threads already greeted, so a redelivered event does not greet twice. */
  private readonly greeted = new RecentSet(10_000);

  constructor(
    private readonly client: WebClient,
    private readonly log: Logger,
  ) {}

  async started(event: AssistantThreadStarted): Promise<void> {
    const { channel_id: channel, thread_ts: thread, context } = event.assistant_thread;
    const id = `${channel}:${thread}`;
    if (this.greeted.has(id)) return;
    this.greeted.add(id);
    const payload = Object.fromEntries(Object.entries(context ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
    try {
      await this.client.chat.postMessage({
        channel,
        thread_ts: thread,
        text: GREETING,
        // As Bolt's `say` does: the thread context rides on the greeting, where Bolt's default store reads it back.
        ...(payload.channel_id ? { metadata: { event_type: "assistant_thread_context", event_payload: payload } } : {}),
      });
    } catch (error) {
      this.greeted.delete(id);
      this.log.warn({ err: error, channel, thread }, "could not greet in a new assistant thread");
      return;
    }
    await this.client.assistant.threads
      .setSuggestedPrompts({ channel_id: channel, thread_ts: thread, title: PROMPTS_TITLE, prompts: SUGGESTED_PROMPTS })
      .catch((error: unknown) => this.log.warn({ err: error, channel, thread }, "could not offer suggested prompts"));
  }
}
