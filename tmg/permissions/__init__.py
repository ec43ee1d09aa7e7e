"""The permission engine's seam: what a tool call would do (ToolAction) and who judges it (PermissionGate)."""
