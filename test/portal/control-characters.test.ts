import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { anonClient, createTestUser, serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callFunction, createCustomer, createPortalUser, createProduct, createProposal, type CustomerRow, type ProposalRow, validCnpj } from "./factories.ts";

/**
 * Control characters (NUL, tab, line breaks, escape, DEL, C1) through the real clients: refused in
 * passwords by Auth and by admin-reset-password, never a 5xx from Auth whatever the body holds,
 * refused in names and single-line text by the data API (23514, 400), accepted as tabs and line
 * breaks in notes and descriptions. "\u0000Abcdefgh12" was once accepted as a password.
 */
const email = () => `ctl-${randomUUID()}@example.test`;

let technician: TestUser;
let admin: TestUser;
let customer: CustomerRow;
let proposal: ProposalRow;

beforeAll(async () => {
  [technician, admin] = await Promise.all([createPortalUser("Ana Controle", "technician"), createPortalUser("Carla Controle", "admin")]);
  customer = await createCustomer(technician);
  proposal = await createProposal(technician, customer.id, (await createProduct()).id);
});

describe("passwords (Auth)", () => {
  it("sign-up refuses a password with NUL or any other control character: 400 validation_failed, no user", async () => {
    const cases: [string, string][] = [
      // A NUL is refused wherever it is in a body, before the password rule is reached.
      ["\u0000Abcdefgh12", "Request body cannot contain the NUL character (\\u0000)"],
      ...["Abcde\tfgh12", "Abcdefgh12\n", "Abc\u001bdefgh12", "Abcdefgh12\u007f", "Abc\u0085defgh12"].map((password): [string, string] => [password, "Password cannot contain control characters"]),
    ];
    for (const [password, message] of cases) {
      const address = email();
      const { data, error } = await anonClient().auth.signUp({ email: address, password });
      expect(error?.status).toBe(400);
      expect(error?.code).toBe("validation_failed");
      expect(error?.message).toBe(message);
      expect(data.user).toBeNull();
      const { data: listed } = await serviceClient().from("profiles").select("user_id").eq("email", address);
      expect(listed).toEqual([]);
    }
  });
  it("a password with spaces, accents and emoji is fine", async () => {
    const { error } = await anonClient().auth.signUp({ email: email(), password: "Ação segura #9 🚀" });
    expect(error).toBeNull();
  });
  it("admins creating or updating a user, and users changing their own, are held to the same rule", async () => {
    const created = await serviceClient().auth.admin.createUser({ email: email(), password: "\u0000Abcdefgh12", email_confirm: true });
    expect(created.error?.status).toBe(400);
    expect(created.error?.code).toBe("validation_failed");

    const user = await createTestUser();
    const updated = await serviceClient().auth.admin.updateUserById(user.id, { password: "Nova\tSenha12" });
    expect(updated.error?.code).toBe("validation_failed");
    const own = await user.client.auth.updateUser({ password: "Nova\u0000Senha12" });
    expect(own.error?.status).toBe(400);
    expect(own.error?.code).toBe("validation_failed");
    // The old password still works: nothing was changed.
    expect((await anonClient().auth.signInWithPassword({ email: user.email, password: user.password })).error).toBeNull();
  });
  it("admin-reset-password refuses a NUL with the body reader's 400, like Auth, changing nothing", async () => {
    const response = await callFunction("admin-reset-password", { token: admin.accessToken, body: { userId: technician.id, newPassword: "\u0000Abcdefgh12" } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_body");
    expect((await anonClient().auth.signInWithPassword({ email: technician.email, password: technician.password })).error).toBeNull();
  });
  it("admin-reset-password refuses other control characters as weak_password (422) with control_characters in details, changing nothing", async () => {
    const response = await callFunction("admin-reset-password", { token: admin.accessToken, body: { userId: technician.id, newPassword: "\u0007Abcdefgh12" } });
    expect(response.status).toBe(422);
    const body = (await response.json()) as { error: { code: string; details: { code: string }[] } };
    expect(body.error.code).toBe("weak_password");
    expect(body.error.details.map((problem) => problem.code)).toEqual(["control_characters"]);
    expect((await anonClient().auth.signInWithPassword({ email: technician.email, password: technician.password })).error).toBeNull();
  });
});

describe("other Auth input", () => {
  it("a NUL in sign-up metadata, admin metadata or a refresh token is 400 validation_failed, never a 500", async () => {
    const signUp = await anonClient().auth.signUp({ email: email(), password: "Abcdefgh12", options: { data: { full_name: "Ana\u0000" } } });
    expect(signUp.error?.status).toBe(400);
    expect(signUp.error?.code).toBe("validation_failed");
    const created = await serviceClient().auth.admin.createUser({ email: email(), password: "Abcdefgh12", user_metadata: { nickname: "\u0000" } });
    expect(created.error?.status).toBe(400);
    const refreshed = await fetch(`${env.url}/auth/v1/token?grant_type=refresh_token`, {
      method: "POST",
      headers: { apikey: env.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ refresh_token: "abc\u0000def" }),
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error_code: string }).error_code).toBe("validation_failed");
  });
  it("an e-mail with a control character is refused as an invalid address", async () => {
    const { error } = await anonClient().auth.signUp({ email: `ana\t${email()}`, password: "Abcdefgh12" });
    expect(error?.status).toBe(400);
    expect(error?.message).toBe("Unable to validate email address: invalid format");
  });
  it("a sign-up whose metadata name holds other control characters succeeds, and the profile gets the name made plain", async () => {
    const { data, error } = await anonClient().auth.signUp({ email: email(), password: "Abcdefgh12", options: { data: { full_name: "\tBeto\u0007Lima\n" } } });
    expect(error).toBeNull();
    const { data: profile } = await serviceClient().from("profiles").select("full_name").eq("user_id", data.user?.id ?? "").single();
    expect(profile).toEqual({ full_name: "Beto Lima" });
  });
});

describe("text fields (data API)", () => {
  it("renaming a profile with a tab is 400 23514 naming the column, and changes nothing", async () => {
    const { error, status } = await technician.client.from("profiles").update({ full_name: "Ana\tControle" }).eq("user_id", technician.id);
    expect(status).toBe(400);
    expect(error?.code).toBe("23514");
    expect(error?.message).toContain("profiles_full_name_no_control_characters");
    const { data } = await technician.client.from("profiles").select("full_name").eq("user_id", technician.id).single();
    expect(data).toEqual({ full_name: "Ana Controle" });
  });
  it("a customer whose company name holds a control character is refused (400)", async () => {
    const { error, status } = await technician.client
      .from("customers")
      .insert({ company_name: "Empresa\u0007 Ltda", contact_name: "Zé", email: `${randomUUID().slice(0, 8)}@cliente.test`, phone: "11987654321", cnpj: validCnpj() });
    expect(status).toBe(400);
    expect(error?.code).toBe("23514");
    expect(error?.message).toContain("customers_company_name_no_control_characters");
  });
  it("proposal notes may hold line breaks and tabs, not other control characters", async () => {
    const notes = "Pedido do cliente:\n\t- instalação em março\r\n\t- dois pontos";
    const accepted = await technician.client.from("proposals").update({ notes }).eq("id", proposal.id).select("notes").single();
    expect(accepted.error).toBeNull();
    expect(accepted.data).toEqual({ notes });
    const refused = await technician.client.from("proposals").update({ notes: "ok\u001b[2J" }).eq("id", proposal.id);
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe("23514");
  });
  it("a NUL anywhere is 400 from the data API (Postgres text cannot hold it)", async () => {
    const { error, status } = await technician.client.from("profiles").update({ full_name: "Ana\u0000" }).eq("user_id", technician.id);
    expect(status).toBe(400);
    expect(error?.code).toBe("22P05");
  });
  it("workspace and workflow names follow the same rule (RPC and table writes)", async () => {
    const owner = await createTestUser();
    const refused = await owner.client.rpc("create_workspace", { p_name: "Acme\nLabs" });
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe("23514");
    const { data: workspace } = await owner.client.rpc("create_workspace", { p_name: "Acme Labs" }).single<{ id: string }>();
    const workflow = await owner.client.from("workflows").insert({ workspace_id: workspace?.id, name: "Boas-vindas\u0008" });
    expect(workflow.status).toBe(400);
    expect(workflow.error?.message).toContain("workflows_name_no_control_characters");
  });
});
