// The config engine's public face: load and compile gateway.yaml, the error it throws,
// and the helpers other layers need. The reloader (reload.ts) stands apart: it brings the
// file watcher and metrics, which only a serving process needs. The rest is internal.

export { ConfigError, formatIssue, type ConfigIssue } from "./issues.js";
export { compileSource, loadConfigFile, sourceHashOf, type SourceOptions } from "./load.js";
export { compile, DEFAULTS, type CompileContext, type CompileResult } from "./compile.js";
export { requestSchemaFile, hashKey } from "./crossref.js";
export { gatewaySchemaPath } from "./schema.js";
export { parseDuration, parseSize, parseListen, parseDate } from "./units.js";
export { toNano, toPpm } from "./money.js";
