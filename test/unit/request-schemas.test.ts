import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { compileRequestSchema } from "../../src/config/request-schema.js";

const schema = (name: string) => compileRequestSchema(fileURLToPath(new URL(`../../schemas/requests/${name}.json`, import.meta.url)));
const url = "https://example.test/frame.png";

test("a missing prompt is missing_required_parameter naming it", () => {
  for (const name of ["video-family-a", "video-family-b", "video-family-c", "video-family-c-fast", "video-family-c-ref"]) {
    const problem = schema(name)({ model: "v" });
    assert.equal(problem?.kind, "missing", name);
    assert.equal(problem?.field, "prompt");
  }
  assert.equal(schema("video-family-c-ref")({ model: "v", prompt: "p" })?.field, "video");
});

test("family A: URL images (string or {imageUri}), ≤3 reference images, no reference video or upload", () => {
  const a = schema("video-family-a");
  assert.equal(a({ model: "v", prompt: "p", image: url, lastFrame: { imageUri: url }, metadata: { duration: "5", aspect_ratio: "16:9", mode: "std" } }), undefined);
  assert.equal(a({ model: "v", prompt: "p", referenceImages: [url, url, url, url] })?.field, "referenceImages");
  assert.match(a({ model: "v", prompt: "p", video: url })?.message ?? "", /reference video is not supported/);
  assert.equal(a({ model: "v", prompt: "p", image: "/local/file.png" })?.field, "image");
  assert.equal(a({ model: "v", prompt: "p", metadata: { aspect_ratio: "4:3" } })?.field, "metadata.aspect_ratio");
});

test("family C: ≤9 reference images, not with image or lastFrame; duration bounds per variant; -ref takes a video", () => {
  const c = schema("video-family-c");
  assert.equal(c({ model: "v", prompt: "image 1 and image 2", referenceImages: Array(9).fill(url), seconds: "30", resolution: "1080p" }), undefined);
  assert.equal(c({ model: "v", prompt: "p", referenceImages: Array(10).fill(url) })?.field, "referenceImages");
  assert.match(c({ model: "v", prompt: "p", referenceImages: [url], image: url })?.message ?? "", /cannot be combined/);
  assert.equal(c({ model: "v", prompt: "p", seconds: "31" })?.field, "seconds");
  assert.equal(c({ model: "v", prompt: "p", seconds: "3" })?.field, "seconds");
  assert.equal(schema("video-family-c-fast")({ model: "v", prompt: "p", seconds: "16" })?.field, "seconds");
  assert.equal(schema("video-family-c-fast")({ model: "v", prompt: "p", seconds: "15" }), undefined);
  assert.equal(schema("video-family-c-ref")({ model: "v", prompt: "p", video: "https://example.test/ref.mp4" }), undefined);
});
