// The indicators role: what a provider showed in a chat (a reaction, a status), so a restart can take it back.

export interface IndicatorStore {
  save(sessionKey: string, data: string): Promise<void>;
  delete(sessionKey: string): Promise<void>;
  /** Indicators of one provider (`slack`), oldest first. */
  list(provider: string): Promise<Array<{ sessionKey: string; data: string }>>;
}
