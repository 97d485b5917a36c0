// What a definition's `model:` may say. The catalog checks names at load; the runtime (spawn) resolves them.
// Both import this table, so the runtime keeps depending on the catalog and never the other way round.

/** Claude Code's model aliases, resolved to the model ids this gateway calls. */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: "claude-sonnet-5-5",
  opus: "claude-opus-5-5",
  haiku: "claude-haiku-5-5",
};

/** A model id as the Anthropic API names them: `claude-sonnet-5-5`, `claude-3-5-haiku-20241022`. */
const MODEL_ID = /^claude-[a-z0-9]+(?:[-.][a-z0-9]+)*$/;

/** `inherit`, an alias, or a model id. */
export function isKnownModel(name: string): boolean {
  return name === "inherit" || Object.hasOwn(MODEL_ALIASES, name) || MODEL_ID.test(name);
}

export const MODEL_CHOICES = `inherit, ${Object.keys(MODEL_ALIASES).join(", ")} or a model id such as ${MODEL_ALIASES.sonnet}`;
