// The admin API's route table, in the order the document lists it. The dispatcher and the
// OpenAPI document are both made from this list.

import { channelHealthRoutes } from "./channel-health.js";
import { channelRoutes } from "./channels.js";
import { codeRoutes } from "./codes.js";
import { priceRoutes } from "./prices.js";
import { reportRoutes } from "./reports.js";
import type { AdminRoute } from "./route.js";
import { tokenRoutes } from "./tokens.js";
import { trafficRoutes } from "./traffic.js";
import { userRoutes } from "./users.js";

const openapiRoute: AdminRoute = {
  method: "GET", path: "/admin/v1/openapi.json", operationId: "openapi",
  summary: "This API's OpenAPI 3.1 document (no admin key needed).",
  responses: { 200: "OpenApiDocument" },
  async handle({ openapi }) {
    return { status: 200, body: openapi() };
  },
};

export const adminRoutes: readonly AdminRoute[] = [openapiRoute, ...userRoutes, ...tokenRoutes, ...codeRoutes, ...channelRoutes, ...channelHealthRoutes, ...trafficRoutes, ...priceRoutes, ...reportRoutes];
