-- Workflow service, part 3: block types in the `tools` category. The spec files the vector-store
-- tools under it (`vectordb`, category `tools`); the validators treat them like `core` blocks. The
-- catalogue migration after this one adds the block types themselves.

alter table workflows_private.block_types drop constraint block_types_category_check;
alter table workflows_private.block_types add constraint block_types_category_check
  check (category in ('trigger', 'control', 'core', 'container', 'tools'));
comment on column workflows_private.block_types.category is 'trigger, control, core, container or tools (run like core).';
