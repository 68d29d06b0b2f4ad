-- Logs API: the one filtered page still over its goal at a million runs was a workflow's errors
-- above a duration (`workflowIds=…&level=error&minDurationMs=…`). Such rows are rare (0.05% of the
-- bench's runs), so walking the workflow's errors newest first reads thousands of rows to find a
-- page; with the duration in the key, Postgres reads only the matching rows and sorts those.
create index workflow_executions_workflow_error_durations_idx
  on public.workflow_executions (workflow_id, duration_ms)
  where level = 'error' and ended_at is not null;
comment on index public.workflow_executions_workflow_error_durations_idx is
  'Logs API: a workflow''s errors by duration (minDurationMs/maxDurationMs with level=error), for rare slow-error pages.';
