// The OpenAPI 3.1 document of the admin API, made from the route table and the schemas (never
// written by hand, so it cannot say what the API does not do).

import { schemas } from "./schemas.js";
import type { AdminRoute } from "./route.js";

const errorAnswers: Readonly<Record<string, string>> = {
  400: "A bad field (named first in the message), a body that is not JSON, or a bad query parameter.",
  401: "No admin key, or one admin.keys does not declare.",
  403: "The admin key lacks the scope this route needs (named in the message).",
  404: "No such user, token, batch, channel or key.",
  409: "A name taken, a change that raced another (version_conflict), an idempotency key used for another credit, or a key in use.",
};

/** The document for `routes`. */
export function openApiDocument(routes: readonly AdminRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return {
    openapi: "3.1.0",
    info: {
      title: "Gateway admin API",
      version,
      description: "Users, tokens, credit, redemption codes, channels and their keys' health, live traffic, the compiled price list, usage reports (JSON or CSV) and the audit log. Authorization: Bearer <admin key>; scopes: read (every GET), write (users and tokens), billing (credit and codes). Money is an exact decimal string.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths,
    components: {
      schemas,
      securitySchemes: { adminKey: { type: "http", scheme: "bearer", description: "An admin key that admin.keys declares." } },
    },
  };
}

function operation(route: AdminRoute): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(route.responses)) {
    const csv = status === "200" && route.csv !== undefined ? { "text/csv": { schema: { type: "string", description: route.csv } } } : {};
    responses[status] = { description: status === "201" ? "Created" : "OK", content: { ...json(schema as string), ...csv } };
  }
  const failures = route.scope === undefined ? [] : ["400", "401", "403", ...(route.path.includes("{") ? ["404"] : []), ...(route.method === "GET" ? [] : ["409"])];
  for (const status of failures) responses[status] = { description: errorAnswers[status], content: json("Error") };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.scope === undefined ? { security: [] } : { security: [{ adminKey: [] }], "x-scope": route.scope, description: `Needs an admin key with the ${route.scope} scope.` }),
    parameters: [...pathParameters(route.path), ...queryParameters(route), ...headerParameters(route)],
    ...(route.body === undefined ? {} : { requestBody: { required: true, content: json(route.body) } }),
    responses,
  };
}

function json(schema: string): Record<string, unknown> {
  return { "application/json": { schema: { $ref: `#/components/schemas/${schema}` } } };
}

function pathParameters(path: string): unknown[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
}

function queryParameters(route: AdminRoute): unknown[] {
  return Object.entries(route.query ?? {}).map(([name, p]) => ({
    name, in: "query", required: p.required === true, description: p.description, schema: p.schema,
  }));
}

function headerParameters(route: AdminRoute): unknown[] {
  return Object.entries(route.headers ?? {}).map(([name, description]) => ({ name, in: "header", required: false, description, schema: { type: "string" } }));
}
