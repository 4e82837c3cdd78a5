#include "tool.h"

px_tool_event_fn px_tool_event_hook;
