// Where a streamed reply can be a draft (sendMessageDraft). Telegram shows drafts in private chats only; a chat that
// refuses them (400) gets an edited message from then on; a Bot API server without the method at all (404 "Not
// Found": older than Bot API 9.3, or a self-hosted server not yet updated) has it for no chat, so every preview is an
// edited message from then on, and the log says so once.
import { GrammyError } from "grammy";
import type { Logger } from "pino";

export class DraftSupport {
  /** Chats whose drafts Telegram refused. */
  private readonly refusedChats = new Set<number>();
  /** The server answered 404 for the method. */
  private missing = false;

  constructor(private readonly log: Logger) {}

  /** Drafts for this chat: a private one (a forum topic gets the edited message), on a server that has them. */
  available(chatId: number, threadId: number | undefined): boolean {
    return !this.missing && chatId > 0 && threadId === undefined && !this.refusedChats.has(chatId);
  }

  /** A failed draft: true when it means no drafts here (the preview goes on as an edited message at once). */
  refused(sessionKey: string, chatId: number, error: GrammyError): boolean {
    if (error.error_code === 404) {
      if (!this.missing) {
        this.log.warn(
          { session: sessionKey, err: error.description },
          "the Bot API server has no sendMessageDraft (404: an older or self-hosted server); streaming replies by editing a message in every chat",
        );
      }
      this.missing = true;
      return true;
    }
    // Not a private chat after all (TEXTDRAFT_PEER_INVALID), or drafts turned off for it. Bad formatting is not this.
    if (error.error_code === 400 && !/entit/i.test(error.description)) {
      this.log.info({ session: sessionKey, err: error.description }, "telegram refused a draft; streaming by editing a message in this chat");
      this.refusedChats.add(chatId);
      return true;
    }
    return false;
  }
}
