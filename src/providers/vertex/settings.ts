// A vertex channel's settings from gateway.yaml: the location (a region, or "global"), the
// project (default: the key file's), and the service-account key file, which is the
// channel's one credential (its "key"). base_url replaces Google's regional host.

import { foreignSettings, type CompiledKind, type RawKindChannel } from "../kind.js";
import { readServiceAccountKeySync } from "./key-file.js";

/** The environment variable Google's tools read for a key file. */
export const CREDENTIALS_ENV = "GOOGLE_APPLICATION_CREDENTIALS";

/** Google's host for a location: global has no regional prefix. */
export function vertexHost(region: string): string {
  return region === "global" ? "https://aiplatform.googleapis.com" : `https://${region}-aiplatform.googleapis.com`;
}

export function compileVertex(raw: RawKindChannel, env: NodeJS.ProcessEnv = process.env): CompiledKind {
  const problems = foreignSettings(raw, "vertex", ["region", "project", "credentials_file"]);
  if (raw.keys !== undefined && raw.keys.length > 0) {
    problems.push("keys is not used by kind vertex: name a service-account key file in credentials_file");
  }
  const region = raw.region;
  if (region === undefined) problems.push("region is required for kind vertex (a location such as us-east5, or global)");
  const file = raw.credentials_file ?? (env[CREDENTIALS_ENV] || undefined);
  let project = raw.project;
  if (file === undefined) {
    problems.push(`credentials_file is required for kind vertex (or set ${CREDENTIALS_ENV})`);
  } else {
    try {
      const key = readServiceAccountKeySync(file);
      project ??= key.projectId;
    } catch (err) {
      problems.push((err as Error).message);
    }
    if (project === undefined && problems.length === 0) {
      problems.push(`project is required for kind vertex: credentials file ${file} has no project_id`);
    }
  }
  return {
    settings: {
      ...(region === undefined ? {} : { region }),
      ...(project === undefined ? {} : { project }),
      ...(file === undefined ? {} : { credentialsFile: file }),
    },
    keys: file === undefined ? [] : [file],
    baseUrl: raw.base_url ?? vertexHost(region ?? "global"),
    problems,
  };
}
