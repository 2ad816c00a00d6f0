// The redemption codes routes: make a batch of single-use codes (returned in that answer
// only; the store keeps their hashes), list the batches and read a batch's state.

import { parseExpiry, parseMoney } from "../accounts/money-input.js";
import { pageQuery } from "./request-parts.js";
import { listBody, nameListQuery, type AdminRoute } from "./route.js";

interface CodesCreateBody {
  readonly count: number;
  readonly amount: string | number;
  readonly expires: string;
  readonly batch?: string;
}

export const codeRoutes: readonly AdminRoute[] = [
  {
    method: "POST", path: "/admin/v1/codes", operationId: "createCodes", scope: "billing",
    summary: "Creates a batch of single-use redemption codes, each worth `amount`, redeemable until `expires`. The codes are shown this once.",
    body: "CodesCreate", responses: { 201: "CodesCreated" },
    async handle({ body, actor, deps }) {
      const b = body as CodesCreateBody;
      const { batch, codes } = await deps.service.createCodes({
        count: b.count, amountNano: parseMoney(b.amount, "amount"), expiresAt: parseExpiry(b.expires, "expires", deps.now()), batch: b.batch,
      }, actor);
      return { status: 201, body: { ...batch, codes }, headers: { "cache-control": "no-store" } };
    },
  },
  {
    method: "GET", path: "/admin/v1/codes", operationId: "listCodeBatches", scope: "read",
    summary: "Lists the code batches in name order: each one's count, amount, expiry, how many were redeemed, who made it and when. Never the codes.",
    query: { ...nameListQuery, prefix: { schema: { type: "string" }, description: "Only batches whose name starts with this." } },
    responses: { 200: "CodeBatchList" },
    async handle({ query, deps }) {
      const page = await deps.service.codeBatches(pageQuery(query));
      return { status: 200, body: listBody(page.items, page.next) };
    },
  },
  {
    method: "GET", path: "/admin/v1/codes/{batch}", operationId: "getCodeBatch", scope: "read",
    summary: "Reads a batch: its count, amount, expiry and how many codes were redeemed.",
    responses: { 200: "CodeBatch" },
    async handle({ params, deps }) {
      return { status: 200, body: await deps.service.codeBatch(params.batch) };
    },
  },
];
