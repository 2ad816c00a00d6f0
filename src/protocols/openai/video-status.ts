// What an OpenAI video job's status answer (the Video object of GET /v1/videos/{id}) means
// for billing: still pending, delivered, or failed. Only `status` decides (queued,
// in_progress, completed, failed); `expires_at` is when a finished video's files expire.

/** Where an asynchronous job stands, as far as billing is concerned. */
export type JobStatus = "pending" | "completed" | "failed";

/** The upstream path of a video job, or of its video (`/content`). */
export function videoJobPath(id: string, content = false): string {
  return `/v1/videos/${encodeURIComponent(id)}${content ? "/content" : ""}`;
}

/** The query a video download may carry upstream: which file of the job (OpenAI's
 * `variant`); anything else of the client's stays here. */
export const videoContentQuery: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["variant", new Set(["video", "thumbnail", "spritesheet"])],
]);

/**
 * Reads a status answer. Undefined when it is not a Video object of job `id` or names a
 * status this code does not know: an answer that cannot be read decides nothing.
 */
export function videoJobStatus(body: Buffer, id: string): JobStatus | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const video = json as Record<string, unknown>;
  if (video.object !== undefined && video.object !== "video") return undefined;
  if (video.id !== undefined && video.id !== id) return undefined;
  switch (video.status) {
    case "queued":
    case "in_progress":
      return "pending";
    case "completed":
      return "completed";
    case "failed":
      return "failed";
    default:
      return undefined;
  }
}
