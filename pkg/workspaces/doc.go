// Package workspaces is the workspace capability: authenticating a
// workspace member's API token for a workspace, and listing the workspace's
// outbound and support webhooks page by page.
package workspaces
