// A newcomer's first session against `npm start`: sign up, sign in, read the data API, upload a
// file and invoke an edge function, all with supabase-js as any Supabase app would.
// Run it with: npm exec tsx examples/client/quickstart.ts
import { createClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import WebSocket from "ws";

/** The CLI's well-known local anon key (printed by `npm start`). */
const LOCAL_ANON_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0";

/** A 1×1 transparent PNG, the smallest avatar there is. */
const AVATAR_PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
  (char) => char.charCodeAt(0),
);

/** What each step of the quickstart produced. */
export interface QuickstartResult {
  userId: string;
  activeProducts: string[];
  avatarUrl: string;
  nationalRanking: unknown;
}

/** Runs the quickstart against a stack; throws with the failing step's error. */
export async function quickstart(url: string, anonKey: string): Promise<QuickstartResult> {
  // Node 20 has no global WebSocket; supabase-js needs one for realtime.
  const supabase = createClient(url, anonKey, {
    auth: { persistSession: false },
    realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket },
  });
  const email = `newcomer-${randomUUID()}@example.com`;
  const password = "a-long-password";

  const signUp = await supabase.auth.signUp({ email, password, options: { data: { full_name: "New Comer" } } });
  if (signUp.error) throw signUp.error;
  const signIn = await supabase.auth.signInWithPassword({ email, password });
  if (signIn.error) throw signIn.error;
  const userId = signIn.data.user.id;

  const products = await supabase.from("products").select("name, monthly_price").eq("is_active", true).order("name");
  if (products.error) throw products.error;

  const path = `${userId}/avatar.png`;
  const upload = await supabase.storage.from("avatars").upload(path, AVATAR_PNG, { contentType: "image/png", upsert: true });
  if (upload.error) throw upload.error;
  const avatarUrl = supabase.storage.from("avatars").getPublicUrl(path).data.publicUrl;

  const ranking = await supabase.functions.invoke("api/v1/gamification/rankings/nacional?limit=3", { method: "GET" });
  if (ranking.error) throw ranking.error;

  return { userId, activeProducts: products.data.map((product) => product.name), avatarUrl, nationalRanking: ranking.data };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await quickstart(process.env.SUPABASE_URL ?? "http://127.0.0.1:54321", process.env.SUPABASE_ANON_KEY ?? LOCAL_ANON_KEY);
  console.log(JSON.stringify(result, null, 2));
}
