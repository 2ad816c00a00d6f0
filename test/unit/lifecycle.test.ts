// The one lifecycle: which phases each route runs (against the table below), and the
// startup check that a phase's needs are given by an earlier phase of the same route.

import assert from "node:assert/strict";
import { test } from "node:test";
import { composeRoute, phasesOf, type LifecycleDeps } from "../../src/pipeline/lifecycle.js";
import { allRoutes, matchRoute, type Route } from "../../src/pipeline/routes.js";

/** The stages only keep their dependencies at composition: nothing is called here. */
const deps = {} as LifecycleDeps;

const modelCall = ["auth", "settle", "access", "body", "model", "rules", "admit", "terminal"];
const listing = ["auth", "settle", "access", "admit", "terminal"];
const counting = ["auth", "settle", "access", "body", "model", "admit", "terminal"];

/** Every route, by a request that reaches it, and the phases it runs after log → route. */
const table: Record<string, readonly string[]> = {
  "POST /v1/chat/completions": modelCall,
  "POST /v1/responses": ["auth", "settle", "access", "body", "model", "rules", "stored-responses", "admit", "terminal"],
  // The rules phase runs here too (a model's request_schema is checked on /v1/messages).
  "POST /v1/messages": ["auth", "settle", "access", "version", "body", "model", "rules", "admit", "terminal"],
  // Counting is no generation request: no rules, and admitted by the rate windows alone.
  "POST /v1/messages/count_tokens": ["auth", "settle", "access", "version", "body", "model", "admit", "terminal"],
  "POST /v1/embeddings": modelCall,
  "POST /v1/images/generations": modelCall,
  "POST /v1/images/edits": modelCall,
  "POST /v1/videos": modelCall,
  "POST /v1/audio/transcriptions": modelCall,
  "POST /v1/audio/speech": modelCall,
  "POST /v1/rerank": modelCall,
  "POST /v1/moderations": modelCall,
  "GET /v1/realtime": ["auth", "settle", "access", "upgrade", "model", "admit", "terminal"],
  "POST /v1beta/models/m:generateContent": modelCall,
  "POST /v1beta/models/m:countTokens": counting,
  "POST /v1/models/m:streamGenerateContent": modelCall,
  "POST /v1/models/m:countTokens": counting,
  "GET /v1/models": listing,
  "GET /v1beta/models": listing,
  "GET /v1beta/models/m": listing,
  "GET /v1/models/m": listing,
  "GET /v1/dashboard/billing/usage": ["auth", "settle", "access", "terminal"],
  // Redeeming reads its JSON body and takes the token's rate windows; no model, no money.
  "POST /v1/dashboard/redeem": ["auth", "settle", "access", "body", "admit", "terminal"],
  "GET /v1/videos/video_1": ["auth", "settle", "access", "job-access", "admit", "terminal"],
};

function routeOf(request: string): Route {
  const [method, path] = request.split(" ");
  const match = matchRoute(method, path);
  assert.ok(match.kind === "ok", `${request} matches no route`);
  return match.route;
}

test("each route runs the phases of the table, in the lifecycle's order", () => {
  for (const [request, phases] of Object.entries(table)) {
    assert.deepEqual(phasesOf(routeOf(request), deps), phases, request);
  }
});

test("the table covers every route", () => {
  const covered = new Set(Object.keys(table).map(routeOf));
  const missing = allRoutes().filter((r) => !covered.has(r)).map((r) => `${r.name} (${r.protocol})`);
  assert.deepEqual(missing, []);
});

test("every route's phases find what they need given earlier; a route that skips a producer but not its consumer is refused", () => {
  for (const route of allRoutes()) assert.doesNotThrow(() => composeRoute(route, deps), route.name);
  const chat = routeOf("POST /v1/chat/completions");
  const bodiless: Route = Object.freeze({ ...chat, name: "bodiless", body: "none" });
  assert.throws(() => composeRoute(bodiless, deps), /phase model needs input/);
});
