// workflow-approval: the page behind an approval block's e-mailed link (see
// _shared/workflows/approvals/page-endpoint.ts). verify_jwt is off: the token is the credential.
import { serviceRpc } from "../_shared/db/service-rpc.ts";
import { approvalPageEndpoint } from "../_shared/workflows/approvals/page-endpoint.ts";

Deno.serve(approvalPageEndpoint(serviceRpc));
