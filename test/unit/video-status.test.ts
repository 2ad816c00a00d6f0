// Reading an OpenAI video job's status answer for billing: only `status` of the job's own
// Video object decides; anything unreadable or unknown decides nothing.

import { test } from "node:test";
import assert from "node:assert/strict";
import { videoJobPath, videoJobStatus } from "../../src/protocols/openai/video-status.js";

const answer = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify({ id: "video_1", object: "video", ...fields }));

test("queued and in_progress are pending; completed and failed are final", () => {
  assert.equal(videoJobStatus(answer({ status: "queued" }), "video_1"), "pending");
  assert.equal(videoJobStatus(answer({ status: "in_progress" }), "video_1"), "pending");
  assert.equal(videoJobStatus(answer({ status: "completed", expires_at: 1_700_086_500 }), "video_1"), "completed");
  assert.equal(videoJobStatus(answer({ status: "failed", error: { code: "x", message: "y" } }), "video_1"), "failed");
});

test("another job's answer, another object, an unknown status or a broken body decide nothing", () => {
  assert.equal(videoJobStatus(answer({ status: "failed" }), "video_2"), undefined);
  assert.equal(videoJobStatus(answer({ object: "error", status: "failed" }), "video_1"), undefined);
  assert.equal(videoJobStatus(answer({ status: "expired" }), "video_1"), undefined);
  assert.equal(videoJobStatus(answer({}), "video_1"), undefined);
  assert.equal(videoJobStatus(Buffer.from('{"status":"fail'), "video_1"), undefined);
  assert.equal(videoJobStatus(Buffer.from("[]"), "video_1"), undefined);
  assert.equal(videoJobStatus(Buffer.from("null"), "video_1"), undefined);
});

test("job paths escape the id", () => {
  assert.equal(videoJobPath("video_1"), "/v1/videos/video_1");
  assert.equal(videoJobPath("a/b", true), "/v1/videos/a%2Fb/content");
});
