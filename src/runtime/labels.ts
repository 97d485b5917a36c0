/**
 * An agent's name as a user reads it: "skill:interview" → "Interview skill", "agent:trip-planner" → "Trip planner
 * agent", "main" → "Switchboard".
 */
export function agentLabel(agentName: string): string {
  if (agentName === "main" || agentName === "switchboard") return "Switchboard";
  const m = /^(skill|agent):(.+)$/.exec(agentName);
  if (!m) return agentName;
  const words = m[2]!.replace(/[-_]+/g, " ").trim();
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} ${m[1]}`;
}
