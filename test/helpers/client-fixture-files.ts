// Reads the recorded client requests (test/fixtures/clients/<client>/<n>-<what>.json, see its
// README) and tells which protocol each speaks. No SDKs or gateway: the docs generator
// (scripts/docs/client-matrix.ts) uses it as well as the replay.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ClientProtocol } from "./client-routes.js";

/** Where the recordings live, one directory per client. */
export const CLIENT_FIXTURES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/clients");

type Json = Record<string, any>;

/** One recorded request (the file's fields), with where it came from. */
export interface Fixture {
  /** `<client dir>/<file>`, e.g. `codex/01-responses-stream-tool-call.json`. */
  readonly name: string;
  readonly client: string;
  readonly what: string;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Json;
  readonly answered: { readonly status: number; readonly contentType: string; readonly events?: { event?: string; data: any }[]; readonly body?: any };
}

/** The recording directories, sorted. */
export function fixtureDirs(dir = CLIENT_FIXTURES_DIR): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
}

/** Every recorded request of every client, in directory and file order. */
export function readAllFixtures(dir = CLIENT_FIXTURES_DIR): Fixture[] {
  const out: Fixture[] = [];
  for (const client of fixtureDirs(dir)) {
    for (const file of fs.readdirSync(path.join(dir, client)).filter((f) => f.endsWith(".json")).sort()) {
      const f = JSON.parse(fs.readFileSync(path.join(dir, client, file), "utf8")) as Omit<Fixture, "name">;
      out.push({ ...f, name: `${client}/${file}` });
    }
  }
  return out;
}

/** The model-request protocol a recorded request speaks; undefined for other requests. */
export function protocolOf(f: Pick<Fixture, "path">): ClientProtocol | undefined {
  if (f.path === "/v1/messages") return "messages";
  if (f.path === "/v1/chat/completions") return "chat";
  if (f.path === "/v1/responses") return "responses";
  if (/^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(f.path)) return "generate";
  return undefined;
}

/** A token count (Claude Code's `/v1/messages/count_tokens`, Gemini's `:countTokens`). */
export const isTokenCount = (f: Pick<Fixture, "path">): boolean => f.path === "/v1/messages/count_tokens" || f.path.endsWith(":countTokens");

export function isStream(f: Pick<Fixture, "path" | "body">): boolean {
  return f.path.includes(":streamGenerateContent") || f.body.stream === true;
}
