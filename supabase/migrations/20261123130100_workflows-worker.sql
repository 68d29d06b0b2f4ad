-- Workflow service: the async worker exists now (supabase/functions/workflow-worker), so the
-- workflow_runs queue's registration, made disabled by …120400_workflows-executions.sql, is
-- enabled: the local poller POSTs the function whenever a queued run is visible, and on hosted
-- Supabase the registry's trigger schedules the per-minute cron job that does the same.
update platform.queue_workers set enabled = true where queue_name = 'workflow_runs';
