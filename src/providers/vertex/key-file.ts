// A Google service-account key file (the JSON `gcloud iam service-accounts keys create`
// writes): who signs (client_email, private_key), where the signed JWT is exchanged for a
// token (token_uri) and the project it belongs to (project_id, the channel's default).

import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/** Where Google exchanges a signed JWT when a key file names no token_uri. */
export const GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token";

export interface ServiceAccountKey {
  readonly clientEmail: string;
  /** PEM, PKCS#8. */
  readonly privateKey: string;
  readonly tokenUri: string;
  readonly projectId?: string;
}

/** The key in `text`, or an Error whose message says what is wrong with `file`. */
export function parseServiceAccountKey(text: string, file: string): ServiceAccountKey {
  let json: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    json = parsed as Record<string, unknown>;
  } catch {
    throw new Error(`credentials file ${file} is not JSON`);
  }
  if (json.type !== "service_account") {
    throw new Error(`credentials file ${file} is not a service-account key (its type is ${JSON.stringify(json.type ?? null)}, not "service_account")`);
  }
  const clientEmail = json.client_email;
  const privateKey = json.private_key;
  if (typeof clientEmail !== "string" || clientEmail === "") throw new Error(`credentials file ${file} has no client_email`);
  if (typeof privateKey !== "string" || privateKey === "") throw new Error(`credentials file ${file} has no private_key`);
  try {
    createPrivateKey(privateKey);
  } catch {
    throw new Error(`credentials file ${file} has a private_key that is not a PEM private key`);
  }
  const tokenUri = typeof json.token_uri === "string" && json.token_uri !== "" ? json.token_uri : GOOGLE_TOKEN_URI;
  try {
    new URL(tokenUri);
  } catch {
    throw new Error(`credentials file ${file} has a token_uri that is not a URL`);
  }
  const projectId = typeof json.project_id === "string" && json.project_id !== "" ? json.project_id : undefined;
  return { clientEmail, privateKey, tokenUri, ...(projectId === undefined ? {} : { projectId }) };
}

/** Reads and checks the key file (config time). */
export function readServiceAccountKeySync(file: string): ServiceAccountKey {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`credentials file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseServiceAccountKey(text, file);
}

/** Reads and checks the key file (request time: each token mint reads it afresh, so a
 * key rotated in place is picked up at the next mint). */
export async function readServiceAccountKey(file: string): Promise<ServiceAccountKey> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new Error(`credentials file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseServiceAccountKey(text, file);
}
