// The clients moved to db/supabase-clients.ts. This re-export keeps _shared/workflows/ building
// while another change reshapes that folder; delete it once workflow-store imports db/ directly.
export { createCallerClient, createServiceRoleClient } from "./db/supabase-clients.ts";
