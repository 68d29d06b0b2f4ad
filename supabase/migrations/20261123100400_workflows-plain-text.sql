-- Workflow service: no control characters in the names people give billing accounts,
-- workspaces, folders and workflows (the rule and its reasons are in ..._shared-plain-text.sql).
-- Workflow descriptions and deployment notes may hold tabs and line breaks. Environment variable
-- names already have a format that excludes control characters.

alter table public.billing_accounts
  add constraint billing_accounts_name_no_control_characters check (shared_private.is_plain_text(name));

alter table public.workspaces
  add constraint workspaces_name_no_control_characters check (shared_private.is_plain_text(name));

alter table public.folders
  add constraint folders_name_no_control_characters check (shared_private.is_plain_text(name));

alter table public.workflows
  add constraint workflows_name_no_control_characters check (shared_private.is_plain_text(name)),
  add constraint workflows_description_no_control_characters check (shared_private.is_plain_text(description, true));

alter table public.workflow_deployments
  add constraint workflow_deployments_note_no_control_characters check (shared_private.is_plain_text(note, true));
