// A channel's provider kind from gateway.yaml: `kind:` (or the first-party kind of
// `protocol:`), the protocol it speaks, and its settings as the kind reads them.

import { isAbsolute, dirname, resolve } from "node:path";
import { providerKinds } from "../providers/index.js";
import type { ProviderKind, RawKindChannel } from "../providers/kind.js";
import type { KindName, Protocol } from "../runtime/types.js";
import type { RawChannel } from "./raw.js";

/** The keys a kind reads, credentials_file resolved against the config file's folder. */
export function rawKindChannel(raw: RawChannel, sourcePath: string): RawKindChannel {
  const file = raw.credentials_file;
  return file === undefined || isAbsolute(file) ? raw : { ...raw, credentials_file: resolve(dirname(sourcePath), file) };
}

/** The channel's kind and protocol (crossref has refused a channel without either, or with
 * a kind this build lacks). */
export function channelKindOf(raw: RawChannel): { readonly kind: ProviderKind; readonly protocol: Protocol } {
  const name: KindName = raw.kind ?? raw.protocol!;
  const kind = providerKinds[name];
  if (!kind) throw new Error(`channel ${raw.name}: no provider kind ${name}`);
  return { kind, protocol: raw.protocol ?? kind.protocol };
}
