// What a provider hands the gateway, recorded from gateway.submit: each message as given, with the files the
// gateway fetched for it (InboundMessage.fetchFiles) filled in once fetched.
import type { InboundMessage, SubmitResult } from "../../src/gateway/types.js";

export function recordSubmits(gateway: { submit(message: InboundMessage): Promise<SubmitResult> }): InboundMessage[] {
  const submitted: InboundMessage[] = [];
  const submit = gateway.submit.bind(gateway);
  gateway.submit = (message) => {
    const record: InboundMessage = { ...message };
    submitted.push(record);
    const fetch = message.fetchFiles;
    if (!fetch) return submit(message);
    return submit({
      ...message,
      fetchFiles: async () => {
        const files = await fetch();
        record.files = files;
        return files;
      },
    });
  };
  return submitted;
}
