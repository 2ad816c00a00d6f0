// SHA-256 and HMAC-SHA-256 for the SigV4 signer, from node:crypto (OpenSSL) instead of the
// pure-JavaScript @aws-crypto/sha256-js: the signer hashes the body and runs five HMACs per
// request, and this is where a signed request spends its CPU (bench/kinds.ts). An adapter
// to the signer's Checksum interface, not a hash of our own.

import { createHash, createHmac, type Hash, type Hmac } from "node:crypto";
import type { Checksum, SourceData } from "@smithy/types";

function bytesOf(data: SourceData): Buffer {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

export class NodeSha256 implements Checksum {
  readonly #secret: Buffer | undefined;
  #hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : bytesOf(secret);
    this.#hash = this.#fresh();
  }

  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash("sha256") : createHmac("sha256", this.#secret);
  }

  update(chunk: Uint8Array): void {
    this.#hash.update(chunk);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }

  reset(): void {
    this.#hash = this.#fresh();
  }
}
