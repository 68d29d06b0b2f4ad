import { createHash, randomUUID } from "node:crypto";
import { Hono } from "hono";
import {
  baseIdentityData,
  confirmEmail,
  createIdentity,
  mergeMetadata,
  reload,
  storeNewPassword,
  upsertContactIdentity,
  validateEmail,
  validatePhone,
} from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { isUuid, requireAdmin, type AdminCaller } from "./authenticate.ts";
import { clientInfo, DEFAULT_ROLE, requestAudience, type AuthContext } from "./context.ts";
import { parseGoDuration } from "./durations.ts";
import { badRequest, internalError, notFound, unprocessable } from "./errors.ts";
import { checkPasswordStrength, hashPassword, isBcryptHash, MAX_PASSWORD_BYTES, randomPassword } from "./passwords.ts";
import { paginationLink } from "./pagination.ts";
import { readBody } from "./request-body.ts";
import { adminDeleteBody, adminUserBody, paginationQuery } from "./schemas.ts";
import { deleteAllSessions } from "./sessions-repository.ts";
import { userJson } from "./user-json.ts";
import {
  deleteUser,
  findUserById,
  findUserByPhone,
  findUserHoldingEmail,
  insertUser,
  listUsers,
  UnreadableUserError,
  updateIdentityData,
  updateUser,
  type UserRecord,
} from "./users-repository.ts";

/** GoTrue's default page size for GET /admin/users. */
const DEFAULT_PER_PAGE = 50;

/** `ban_duration` as GoTrue reads it: "none" lifts a ban, anything else is a Go duration from now. */
function banUntil(banDuration: string): Date | null {
  if (banDuration === "none") return null;
  let milliseconds: number;
  try {
    milliseconds = parseGoDuration(banDuration);
  } catch (error) {
    throw badRequest("validation_failed", `invalid format for ban duration: ${(error as Error).message}`);
  }
  return milliseconds === 0 ? null : new Date(Date.now() + milliseconds);
}

/** Loads the user named in the path (GoTrue's loadUser): a non-UUID id or an unknown user is 404. */
async function loadUser(context: AuthContext, id: string): Promise<UserRecord> {
  if (!isUuid(id)) throw notFound("validation_failed", "user_id must be an UUID");
  let record: UserRecord | null;
  try {
    record = await findUserById(context.db, id);
  } catch (error) {
    if (error instanceof UnreadableUserError) throw internalError("Database error loading user", error);
    throw error;
  }
  if (!record) throw notFound("user_not_found", "User not found");
  return record;
}

async function list(context: AuthContext, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const query = paginationQuery.safeParse({ page: url.searchParams.get("page") ?? undefined, per_page: url.searchParams.get("per_page") ?? undefined });
  if (!query.success) throw badRequest("validation_failed", `Bad Pagination Parameters: ${query.error.issues[0].message}`);
  const page = query.data.page ? Number(query.data.page) : 1;
  const perPage = query.data.per_page ? Number(query.data.per_page) : DEFAULT_PER_PAGE;
  if (perPage === 0) throw badRequest("validation_failed", "Bad Pagination Parameters: per_page must be greater than 0");
  const aud = requestAudience(request);
  let result: Awaited<ReturnType<typeof listUsers>>;
  try {
    result = await listUsers(context.db, aud, Math.max(page, 1), perPage);
  } catch (error) {
    if (error instanceof UnreadableUserError) throw internalError("Database error finding users", error);
    throw error;
  }
  return Response.json(
    { users: result.records.map(userJson), aud },
    { headers: { Link: paginationLink(url, page, perPage, result.total), "X-Total-Count": String(result.total) } },
  );
}

/**
 * POST /admin/users (auth-js admin.createUser): 200 with the user. Email/phone must be new
 * (422 email_exists / phone_exists); no password means a random one; `email_confirm` confirms at
 * once; app_metadata gets provider/providers from the identities created, merged with what is sent.
 */
async function create(context: AuthContext, request: Request, admin: AdminCaller): Promise<Response> {
  const body = await readBody(request, adminUserBody);
  const aud = body.aud || requestAudience(request);
  const email = body.email ?? "";
  const phone = body.phone ?? "";
  if (email === "" && phone === "") throw badRequest("validation_failed", "Cannot create a user without either an email or phone");
  const providers: ("email" | "phone")[] = [];
  const address = email === "" ? "" : validateEmail(email);
  if (address !== "") {
    if (await findUserHoldingEmail(context.db, address, aud)) throw unprocessable("email_exists", "A user with this email address has already been registered");
    providers.push("email");
  }
  const number = phone === "" ? "" : validatePhone(phone);
  if (number !== "") {
    if (await findUserByPhone(context.db, number, aud)) throw unprocessable("phone_exists", "Phone number already registered by another user");
    providers.push("phone");
  }
  const passwordHash = body.password_hash ?? "";
  if (body.password != null && passwordHash !== "") throw badRequest("validation_failed", "Only a password or a password hash should be provided");
  let encryptedPassword: string;
  if (passwordHash !== "") {
    // GoTrue answers a malformed hash with a 500; a client mistake deserves a 400 here.
    if (!isBcryptHash(passwordHash)) throw badRequest("validation_failed", "Invalid password hash: only bcrypt hashes are supported");
    encryptedPassword = passwordHash;
  } else {
    const password = body.password || randomPassword();
    if (Buffer.byteLength(password, "utf8") > MAX_PASSWORD_BYTES) throw badRequest("validation_failed", "bcrypt: password length exceeds 72 bytes");
    encryptedPassword = await hashPassword(password);
  }
  let id: string = randomUUID();
  if (body.id) {
    if (!isUuid(body.id)) throw badRequest("validation_failed", "ID must conform to the uuid v4 format");
    if (/^0{8}-0{4}-0{4}-0{4}-0{12}$/.test(body.id)) throw badRequest("validation_failed", "ID cannot be a nil uuid");
    if (await findUserById(context.db, body.id)) throw unprocessable("user_already_exists", "A user with this ID already exists");
    id = body.id.toLowerCase();
  }
  const bannedUntil = body.ban_duration ? banUntil(body.ban_duration) : undefined;

  const created = await context.db.begin(async (tx) => {
    try {
      await insertUser(tx, {
        id,
        aud,
        role: body.role || DEFAULT_ROLE,
        email: address || null,
        phone: number || null,
        encryptedPassword,
        appMetadata: mergeMetadata({ provider: providers[0], providers }, body.app_metadata ?? {}),
        userMetadata: body.user_metadata ?? {},
      });
    } catch (error) {
      // Typically a trigger on auth.users failing; GoTrue hides the cause the same way.
      throw internalError("Database error creating new user", error);
    }
    if (address !== "") await createIdentity(tx, id, "email", baseIdentityData(id, { email: address }));
    if (number !== "") await createIdentity(tx, id, "phone", baseIdentityData(id, { phone: number }));
    await recordAudit(tx, { adminRole: admin.role }, "user_signedup", clientInfo(request).ip, { user_id: id, user_email: address, user_phone: number });
    if (body.email_confirm) await confirmEmail(tx, await reload(tx, id));
    if (body.phone_confirm) await updateUser(tx, id, { phone_confirmed_at: "now" });
    if (bannedUntil !== undefined) await updateUser(tx, id, { banned_until: bannedUntil });
    return reload(tx, id);
  });
  return Response.json(userJson(created));
}

/**
 * PUT /admin/users/{id} (auth-js admin.updateUserById): password (checked for strength; all of the
 * user's sessions end), email/phone (identities follow), metadata merged key by key, role, ban.
 */
async function update(context: AuthContext, request: Request, admin: AdminCaller, id: string): Promise<Response> {
  const record = await loadUser(context, id);
  const { user } = record;
  const body = await readBody(request, adminUserBody);
  const email = body.email ? validateEmail(body.email) : "";
  const phone = body.phone ? validatePhone(body.phone) : "";
  const bannedUntil = body.ban_duration ? banUntil(body.ban_duration) : undefined;
  let newHash: string | undefined;
  if (body.password != null) {
    checkPasswordStrength(body.password, context.settings);
    newHash = await hashPassword(body.password);
  }
  if (email !== "" && email !== user.email && (await findUserHoldingEmail(context.db, email, user.aud ?? requestAudience(request), user.id))) {
    throw unprocessable("email_exists", "A user with this email address has already been registered");
  }
  if (phone !== "" && phone !== user.phone) {
    const holder = await findUserByPhone(context.db, phone, user.aud ?? requestAudience(request));
    if (holder && holder.user.id !== user.id) throw unprocessable("phone_exists", "A user with this phone number has already been registered");
  }

  const updated = await context.db.begin(async (tx) => {
    if (body.role) await updateUser(tx, id, { role: body.role.trim() });
    if (body.email_confirm) await confirmEmail(tx, await reload(tx, id));
    if (body.phone_confirm) await updateUser(tx, id, { phone_confirmed_at: "now" });
    if (newHash !== undefined) await storeNewPassword(tx, id, newHash, null);
    if (email !== "") {
      await upsertContactIdentity(tx, await reload(tx, id), "email", email, body.email_confirm === true);
      await updateUser(tx, id, { email });
    }
    if (phone !== "") {
      await upsertContactIdentity(tx, await reload(tx, id), "phone", phone, body.phone_confirm === true);
      await updateUser(tx, id, { phone });
    }
    if (body.app_metadata) {
      const current = await reload(tx, id);
      await updateUser(tx, id, { raw_app_meta_data: mergeMetadata(current.user.raw_app_meta_data, body.app_metadata) });
    }
    if (body.user_metadata) {
      const current = await reload(tx, id);
      await updateUser(tx, id, { raw_user_meta_data: mergeMetadata(current.user.raw_user_meta_data, body.user_metadata) });
    }
    if (bannedUntil !== undefined) await updateUser(tx, id, { banned_until: bannedUntil });
    await recordAudit(tx, { adminRole: admin.role }, "user_modified", clientInfo(request).ip, { user_id: id, user_email: user.email ?? "", user_phone: user.phone ?? "" });
    return reload(tx, id);
  });
  return Response.json(userJson(updated));
}

/** A value no one can look up again, as GoTrue's soft delete writes over emails and provider ids. */
function obfuscate(userId: string, value: string): string {
  return createHash("sha256").update(userId + value).digest("base64url");
}

/**
 * DELETE /admin/users/{id}: 200 `{}`. Hard delete removes the row (identities and sessions cascade);
 * `should_soft_delete` keeps it with obfuscated contact data, no password, empty metadata and
 * `deleted_at` set, and signs the user out.
 */
async function remove(context: AuthContext, request: Request, admin: AdminCaller, id: string): Promise<Response> {
  const record = await loadUser(context, id);
  const body = await readBody(request, adminDeleteBody, true);
  const { user } = record;
  await context.db.begin(async (tx) => {
    await recordAudit(tx, { adminRole: admin.role }, "user_deleted", clientInfo(request).ip, { user_id: id, user_email: user.email ?? "", user_phone: user.phone ?? "" });
    if (!body.should_soft_delete) {
      await deleteUser(tx, id);
      return;
    }
    if (user.deleted_at) return;
    await updateUser(tx, id, {
      email: user.email ? obfuscate(id, user.email) : null,
      phone: user.phone ? obfuscate(id, user.phone).slice(0, 15) : null,
      email_change: user.email_change ? obfuscate(id, user.email_change) : "",
      encrypted_password: null,
      confirmation_token: "",
      recovery_token: "",
      email_change_token_current: "",
      email_change_token_new: "",
      phone_change_token: "",
      raw_user_meta_data: {},
      raw_app_meta_data: {},
      deleted_at: "now",
    });
    for (const identity of record.identities) {
      await updateIdentityData(tx, identity.id, {}, obfuscate(id, `${identity.provider}:${identity.provider_id}`));
    }
    await deleteAllSessions(tx, id);
  });
  return Response.json({});
}

/** Routes under /admin/users, all behind the service_role check. */
export function adminRoutes(context: AuthContext): Hono<{ Variables: { admin: AdminCaller } }> {
  const app = new Hono<{ Variables: { admin: AdminCaller } }>();
  app.use("/admin/*", async (c, next) => {
    c.set("admin", requireAdmin(c.req.raw, context));
    await next();
  });
  app.get("/admin/users", (c) => list(context, c.req.raw));
  app.post("/admin/users", (c) => create(context, c.req.raw, c.get("admin")));
  app.get("/admin/users/:id", async (c) => Response.json(userJson(await loadUser(context, c.req.param("id")))));
  app.put("/admin/users/:id", (c) => update(context, c.req.raw, c.get("admin"), c.req.param("id")));
  app.delete("/admin/users/:id", (c) => remove(context, c.req.raw, c.get("admin"), c.req.param("id")));
  return app;
}
