// The composer's slash commands: `/` at the start of the prompt offers the agent's
// commands (available_commands_update, folded into `commands`); one is sent as prompt
// text, as ACP says (`/name input`).

import type { VariableName } from "./contracts";
import { isRecord, str } from "./dom";
import { matching } from "./mentions";

/** The `/word` the prompt starts with while the caret is in it, or null. */
export function commandAt(text: string, caret: number): { query: string } | null {
  const match = /^\/([^\s/]*)$/u.exec(text.slice(0, caret));
  return match === null ? null : { query: match[1] ?? "" };
}

/** The agent's commands as menu rows (name; description and input hint), for `query`. */
export function commandItems(commands: readonly unknown[], query: string): VariableName[] {
  const rows: VariableName[] = [];
  for (const command of commands) {
    const name = isRecord(command) ? str(command.name) : null;
    if (!isRecord(command) || !name) continue;
    const hint = isRecord(command.input) ? str(command.input.hint) : null;
    const description = str(command.description) ?? "";
    rows.push({ name, type: hint ? `${description} · ${hint}` : description });
  }
  return matching(rows, query);
}
