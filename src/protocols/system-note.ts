// How a system message sent partway through a conversation reaches a protocol that has no
// such role (messages, generate-content): as a marked note in a user turn, in place.
//
// Why in place and not appended to the system prompt (LiteLLM hoists every system message
// into the system prompt): clients put these mid-conversation on purpose (Claude Code's
// reminders belong to the turn they follow), and rewriting the system prompt would change
// the prompt's cached prefix on every turn that adds one, so each such turn would pay for
// the whole conversation uncached.

import type { Message, TextBlock } from "./canonical.js";

/** The text of a mid-conversation system message as a user-turn note. */
export function systemNote(text: string): string {
  return `<system>\n${text}\n</system>`;
}

/** A system-role message as a user message carrying its text as notes; other messages as they are. */
export function withSystemAsUser(m: Message): Message {
  if (m.role !== "system") return m;
  const content = m.content.filter((b): b is TextBlock => b.type === "text").map((b): TextBlock =>
    (b.cache ? { type: "text", text: systemNote(b.text), cache: b.cache } : { type: "text", text: systemNote(b.text) }));
  return { role: "user", content };
}
