/**
 * The startup command as a server's users see it: the blueprint's template with the given values
 * in place of their placeholders (`{{KEY}}`, and `${KEY}` in the bash form of imported eggs).
 * Placeholders of other variables and the agent's own (`{{SERVER_MEMORY}}`, `{{NODE}}`) stay as
 * they are. Display only: the agent builds the real command (src/agent/environment/template.ts).
 */
import { PLACEHOLDER } from './egg-startup.js';

export function startupLine(template: string, values: ReadonlyMap<string, string>): string {
  return template.replace(PLACEHOLDER, (whole, a: string | undefined, b: string | undefined) => values.get((a ?? b)!) ?? whole);
}
