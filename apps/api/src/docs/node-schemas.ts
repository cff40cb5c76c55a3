import { z } from 'zod';
import { NodeConnectInputSchema, NodeResultInputSchema, NodeViewSchema } from '@codemode/contracts';

/* Paired nodes (SPEC §15): the bodies and answers of NodesController, for the OpenAPI document. */

/** `GET /v1/nodes`. */
export const NodeListSchema = z.object({ nodes: z.array(NodeViewSchema) });
/** `DELETE /v1/nodes/{id}`. */
export const NodeDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });
/** `POST /v1/nodes/{id}/results`, answered 202. */
export const NodeResultAcceptedSchema = z.object({ accepted: z.literal(true) });

export const NODE_REQUEST_SCHEMAS = {
  NodeConnectInput: NodeConnectInputSchema,
  NodeResultInput: NodeResultInputSchema,
} satisfies Record<string, z.ZodType>;

export const NODE_RESPONSE_SCHEMAS = {
  NodeList: NodeListSchema,
  NodeDeleted: NodeDeletedSchema,
  NodeResultAccepted: NodeResultAcceptedSchema,
} satisfies Record<string, z.ZodType>;
