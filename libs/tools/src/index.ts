/** Tools of a Code Mode session: the core workspace tools (read, ls, find, grep) and the
 * catalog definitions of all core tools, webhook client tools, and the deployment's MCP servers. */
export * from './errors';

export {
  coreToolDefinitions,
  FIND_INPUT_SCHEMA,
  FIND_OUTPUT_SCHEMA,
  GREP_INPUT_SCHEMA,
  GREP_OUTPUT_SCHEMA,
  LS_INPUT_SCHEMA,
  LS_OUTPUT_SCHEMA,
  READ_INPUT_SCHEMA,
  READ_OUTPUT_SCHEMA,
  WORKSPACE_TOOL_DEFINITIONS,
} from './core/definitions';
export { EXEC_INPUT_SCHEMA, EXEC_TOOL_DEFINITION, PROCESS_INPUT_SCHEMA, PROCESS_TOOL_DEFINITION } from './core/shell-definitions';
export {
  isWorkspaceToolName,
  runCoreTool,
  WORKSPACE_TOOL_NAMES,
  type CoreToolContext,
  type CoreToolResult,
  type WorkspaceToolName,
} from './core/run-core-tool';
export type { ReadResult } from './core/read';
export type { LsResult } from './core/ls';
export type { FindResult } from './core/find';
export type { GrepMatch, GrepResult } from './core/grep';
export {
  FIND_DEFAULT_LIMIT,
  GREP_DEFAULT_LIMIT,
  GREP_MAX_CONTEXT,
  GREP_MAX_LINE_CHARS,
  LS_DEFAULT_LIMIT,
  MAX_OUTPUT_BYTES,
  PATTERN_MATCH_BUDGET_MS,
  READ_MAX_LINES,
} from './core/limits';

export {
  callWebhookTool,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  MAX_WEBHOOK_RESPONSE_BYTES,
  type WebhookCallBody,
  type WebhookCallOptions,
} from './webhook/webhook-caller';
export { canonicalAddress, classifyAddress, describeAddressClass, type AddressClass } from './webhook/address-rules';
export {
  systemResolver,
  WebhookAddressPolicy,
  WebhookAllowList,
  type HostResolver,
  type ResolvedAddress,
  type ResolvedEndpoint,
  type WebhookTenancyMode,
} from './webhook/address-policy';
export { pinnedLookup } from './webhook/pinned-lookup';
export {
  findRefusedEndpoint,
  findRefusedUrl,
  REGISTRATION_RESOLVE_TIMEOUT_MS,
  type RefusedClientTool,
  type RefusedEndpoint,
} from './webhook/endpoint-check';
export {
  EndpointUnresolvedError,
  refusalReason,
  WebhookAddressRefusedError,
  WebhookAllowListError,
  type EndpointRefusal,
} from './webhook/webhook-address-errors';
export {
  DEFAULT_SIGNATURE_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  signWebhookBody,
  TIMESTAMP_HEADER,
  verifyWebhookSignature,
  type VerifyWebhookSignatureOptions,
} from './webhook/signature';

export { McpServerConfigSchema, McpServersConfigSchema, parseMcpServersConfig, type McpServerConfig } from './mcp/mcp-config';
export { mcpServerVisibleTo, scopeMcpToTenant, withTenants, type McpServerScope } from './mcp/mcp-tenants';
export {
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  DEFAULT_MCP_CONNECT_TIMEOUT_MS,
  DEFAULT_MCP_HEALTH_CHECK_INTERVAL_MS,
  McpServers,
  type McpCallOptions,
  type McpCallResult,
  type McpServersOptions,
  type McpServerStatus,
} from './mcp/mcp-servers';
export {
  DEFAULT_MCP_RECONNECT_INITIAL_DELAY_MS,
  DEFAULT_MCP_RECONNECT_MAX_DELAY_MS,
  MCP_SERVER_STATES,
  reconnectDelayMs,
  type McpReconnectOptions,
  type McpServerState,
} from './mcp/mcp-reconnect';

export { contentText, DEFAULT_TOOL_ERROR_MESSAGE, isMcpErrorResult, toolErrorMessage } from './tool-error-message';
export { coreGuestCatalogJson, SessionToolCatalog } from './session-tool-catalog';
export { SessionCatalogCache, type McpCatalogSource, type StoredToolsSource, type TenantToolsSource } from './session-catalog-cache';
export { readTenantToolList } from './tenant-tool-list';
export { readStoredToolList, StoredToolListError } from './stored-tool-list';
export { SHARED_SLICES, type EventLoopSlices } from './core/event-loop-slices';

export { decideTool, mergePolicies } from './policy/policy-matcher';
export { policyName } from './policy/policy-name';
export { shellRouteRefusal } from './policy/shell-route-policy';
export { isOperatorTool, mergeRegistration } from './registration/registration-merge';
export { APPROVAL_WEBHOOK_TIMEOUT_MS, postApprovalRequested, type ApprovalWebhookBody } from './webhook/approval-webhook';
export {
  backoffMs,
  deliverNotification,
  NOTIFICATION_MAX_ATTEMPTS,
  NOTIFICATION_TIMEOUT_MS,
  shouldRetry,
  type NotificationDelivery,
  type NotificationOutcome,
  type NotificationTry,
} from './notifications/notification-delivery';
export { HeaderVault, SealedHeadersError, type HeaderBinding } from './webhook/header-vault';
