// The one exception type stages throw; the pipeline renders it in the caller's protocol.

import type { ErrorSpec } from "./catalogue.js";

export class GatewayError extends Error {
  readonly spec: ErrorSpec;
  /** Status to answer with; defaults to the catalogue's (upstream failures override it). */
  readonly status: number;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers?: Readonly<Record<string, string>>;

  constructor(spec: ErrorSpec, message?: string, opts?: { status?: number; headers?: Record<string, string> }) {
    super(message ?? spec.message);
    this.name = "GatewayError";
    this.spec = spec;
    this.status = opts?.status ?? spec.status;
    this.headers = opts?.headers;
  }

  get code(): string {
    return this.spec.code;
  }

  get type(): string {
    return this.spec.type;
  }
}
