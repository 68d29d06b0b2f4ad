-- Workflow service, part 4: why a failed run failed, as the logs API and completion webhooks show it
-- (run_error, run_final_output; the e2e proof is test/workflows/logs-run-errors.test.ts).
begin;
select plan(7);

select is(workflows_private.run_error('failed', 'BLOCK_FAILED', 'Error: no stock (line 1)', '{"id": "boom", "name": "Boom", "type": "function"}'),
  '{"code": "BLOCK_FAILED", "message": "Error: no stock (line 1)", "blockId": "boom", "blockName": "Boom"}'::jsonb,
  'A failed block is named by its id and name beside the code and message');
select is(workflows_private.run_error('failed', 'INVALID_INPUT', 'trigger "API" field "items" must be JSON', null),
  '{"code": "INVALID_INPUT", "message": "trigger \"API\" field \"items\" must be JSON", "blockId": null, "blockName": null}'::jsonb,
  'A run refused before its first block has the refusal''s code and message, and no block');
select is(workflows_private.run_error('completed', null, null, null), null, 'A completed run has no error');
select is(workflows_private.run_error('cancelled', 'CANCELLED', 'cancelled', null), null, 'nor has a cancelled one');
select is(workflows_private.run_final_output('failed', '{"order": 7}'), null, 'A failed run has no final output');
select is(workflows_private.run_final_output('completed', '{"result": 2}'), '{"result": 2}'::jsonb, 'A completed run''s final output is its output');

set local role service_role;
select throws_ok($$select workflows_private.run_error('failed', 'X', 'x', null)$$, '42501', null, 'The helpers are no API of their own');

select * from finish();
rollback;
