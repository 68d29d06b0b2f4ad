-- The gateway's duties, run inside HAProxy (the public listener on the gateway port) for every
-- request before it is proxied: routing, CORS preflights, request ids, key translation, the
-- per-caller rate limits, the pg-meta guard, the unfiltered PATCH/DELETE refusal and the body caps.
-- Every constant (keys, limits, CORS lists, error bodies) comes from the settings file that
-- platform/gateway/front.ts writes from the TypeScript configuration; nothing is retyped here.
-- Bearer tokens are verified once by the node half of the gateway (the one verifier, HS256 and the
-- asymmetric signing keys) and their claims cached here until the token's exp.

local settings = dofile(os.getenv("ORBITA_GATEWAY_SETTINGS"))
local trusted = Map.new(settings.trustedMap, Map._ip)

-- Claims of verified tokens, by token; emptied when full, so a flood of distinct tokens costs
-- memory only up to the capacity.
local claimsByToken = {}
local claimsCount = 0

-- Fixed one-minute windows per (route family, caller): { startedAt = ms, count = n }.
local windows = {}
local windowCount = 0

local function nowMs()
  local now = core.now()
  return now.sec * 1000 + math.floor(now.usec / 1000)
end

-- A request header (repeated ones joined with ", " as node reads them), nil when absent, and how
-- many times the request sent it. Two native fetches for the headers a request has, one for those
-- it lacks: cheaper than building a Lua table of every header, which the gateway did at first
-- (see docs/performance.md).
local function header(fetch, name)
  local count = fetch:req_fhdr_cnt(name)
  if count == 0 then return nil, 0 end
  if count == 1 then return fetch:req_fhdr(name), 1 end
  local values = {}
  for occurrence = 1, count do values[occurrence] = fetch:req_fhdr(name, occurrence) end
  return table.concat(values, ", "), count
end

local function startsWith(text, prefix)
  return text:sub(1, #prefix) == prefix
end

-- The route prefixes with their "/"-terminated forms, built once rather than per request.
local prefixes = {}
for index, entry in ipairs(settings.prefixes) do
  prefixes[index] = { prefix = entry[1], withSlash = entry[1] .. "/", upstream = entry[2] }
end

-- GoTrue's browser redirects carry no API key, and Kong forwards them untouched.
local AUTH_REDIRECTS = { "/verify", "/callback", "/authorize" }

-- Where a request goes: the backend, the path it sees (prefix stripped) and whether Kong would
-- translate API keys on that route; nil for no route.
local function route(path, host)
  -- Chat deployments are the `chat` function's, at /chat/<identifier> or on their own subdomain.
  if host ~= nil then
    local hostname = host:lower()
    if hostname:find(".chat.", 1, true) ~= nil then
      local label = hostname:gsub(":%d+$", ""):match("^([a-z0-9][a-z0-9%-]*)%.chat%.")
      if label ~= nil and #label <= 63 and label:sub(-1) ~= "-" then
        return "functions", "/chat/" .. label .. (path == "/" and "" or path), false
      end
    end
  end
  if path == "/chat" or startsWith(path, "/chat/") then return "functions", path, false end
  for _, entry in ipairs(prefixes) do
    if path == entry.prefix or startsWith(path, entry.withSlash) then
      local rest = path:sub(#entry.prefix + 1)
      if rest == "" then rest = "/" end
      local translate = true
      if entry.upstream == "auth" then
        for _, redirect in ipairs(AUTH_REDIRECTS) do
          if startsWith(rest, redirect) and not rest:sub(#redirect + 1, #redirect + 1):match("^[%w_]$") then translate = false end
        end
      end
      return entry.upstream, rest, translate
    end
  end
  -- The specs' root paths (/api/...) are the `api` edge function's, as on a custom domain.
  if path == "/api" or startsWith(path, "/api/") then return "functions", path, true end
  return nil
end

-- The gateway's credential, which the node half demands of the verifier's requests too; from
-- HAProxy's environment, as haproxy.cfg's rules read it.
local CREDENTIAL = os.getenv(settings.credentialVariable)
if CREDENTIAL == nil or CREDENTIAL == "" then error(settings.credentialVariable .. " is not set") end

local SERVICE_ROLE_AUTHORIZATION = "Bearer " .. settings.keys.serviceRole
local ANON_AUTHORIZATION = "Bearer " .. settings.keys.anon

-- The Authorization value Kong forwards for `supabase start`: a non-`sb_` Bearer token passes
-- through; otherwise the apikey header decides (secret key: service_role JWT, publishable key:
-- anon JWT, anything else copied verbatim, which upstream treats as anonymous or invalid).
local function translateAuthorization(authorization, apikey)
  if authorization ~= nil and authorization ~= "" and not startsWith(authorization, "Bearer sb_") then return authorization end
  local key = apikey
  if key == nil and authorization ~= nil then key = authorization:sub(#"Bearer " + 1) end
  if key == nil then return nil end
  if key == settings.keys.secret then return SERVICE_ROLE_AUTHORIZATION end
  if key == settings.keys.publishable then return ANON_AUTHORIZATION end
  if startsWith(key, "ey") then return "Bearer " .. key end
  return key
end

-- Claims of a valid bearer token ({ role, sub }), or nil for a missing, malformed, forged or
-- expired one. A token not seen before is sent to the node verifier. Cached by the whole
-- Authorization value ("Bearer " and the token), which names the token as well without a copy.
local function bearerClaims(authorization)
  if authorization == nil or not startsWith(authorization, "Bearer ") then return nil end
  local known = claimsByToken[authorization]
  if known ~= nil then
    if known.exp == nil or core.now().sec < known.exp then return known end
    claimsByToken[authorization] = nil
    claimsCount = claimsCount - 1
    return nil
  end
  local answer = core.httpclient():get({ url = settings.verifierUrl, headers = { ["authorization"] = { authorization }, [settings.credentialHeader] = { CREDENTIAL } } })
  if answer == nil or answer.status ~= 200 then return nil end
  local role, sub, exp = (answer.body or ""):match("^([^\n]*)\n([^\n]*)\n([^\n]*)$")
  if role == nil then return nil end
  local claims = { role = role, sub = sub ~= "" and sub or nil, exp = tonumber(exp) }
  if claimsCount >= settings.claimsCapacity then
    claimsByToken = {}
    claimsCount = 0
  end
  claimsByToken[authorization] = claims
  claimsCount = claimsCount + 1
  return claims
end

-- Counts a request against its caller's window: whether it fits, and the seconds left.
local function hit(family, caller)
  local key = family .. ":" .. caller
  local now = nowMs()
  local window = windows[key]
  if window == nil or now - window.startedAt >= 60000 then
    if window == nil then windowCount = windowCount + 1 end
    window = { startedAt = now, count = 0 }
    windows[key] = window
    if windowCount >= 10000 then
      for other, open in pairs(windows) do
        if now - open.startedAt >= 60000 then
          windows[other] = nil
          windowCount = windowCount - 1
        end
      end
    end
  end
  window.count = window.count + 1
  return window.count <= settings.rateLimits[family], math.max(1, math.ceil((window.startedAt + 60000 - now) / 1000))
end

local function isIPv4(text)
  local a, b, c, d = text:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  if a == nil then return false end
  return #a <= 3 and #b <= 3 and #c <= 3 and #d <= 3 and tonumber(a) <= 255 and tonumber(b) <= 255 and tonumber(c) <= 255 and tonumber(d) <= 255
end

local function isIP(text)
  return isIPv4(text) or (text:find(":", 1, true) ~= nil and text:match("^[%x:.]+$") ~= nil)
end

-- "::ffff:127.0.0.1" (an IPv4 peer on a dual-stack socket) as "127.0.0.1".
local function unmapped(address)
  if startsWith(address, "::ffff:") and isIPv4(address:sub(8)) then return address:sub(8) end
  return address
end

local function isTrusted(address)
  return isIP(address) and trusted:lookup(address) ~= nil
end

-- The client's address: the TCP peer, unless the peer is a trusted proxy (as Kong's trusted_ips).
-- Then X-Forwarded-For is read from the right, skipping trusted proxies, and the first address
-- that is not one is the client; entries further left were written by the client and prove
-- nothing. A malformed entry ends the walk at the last good one. The peer is always an address
-- (the listener is TCP), so only the forwarded entries are checked for being one.
local function clientAddress(fetch)
  local client = unmapped(fetch:src())
  if trusted:lookup(client) == nil then return client end
  local hops = {}
  for hop in (header(fetch, "x-forwarded-for") or ""):gmatch("[^,]+") do
    hop = hop:match("^%s*(.-)%s*$")
    if hop ~= "" then hops[#hops + 1] = hop end
  end
  for index = #hops, 1, -1 do
    local hop = unmapped(hops[index])
    if not isIP(hop) then break end
    client = hop
    if not isTrusted(client) then break end
  end
  return client
end

local function byteOf(hex)
  return string.char(tonumber(hex, 16))
end

-- A query component with its escapes decoded as PostgREST's server (Warp) decodes them: "+" as a
-- space, each "%" and two hex digits as that byte, any other "%" left as it is.
local function decodeComponent(text)
  return (text:gsub("%+", " "):gsub("%%(%x%x)", byteOf))
end

-- Whether a query string decodes to UTF-8. PostgREST 12.0.2 answers a query that does not with a
-- 500 outside its error shape, so the gateway refuses it first. Lua's utf8.len rejects overlong
-- forms, stray continuation bytes and code points past U+10FFFF but accepts UTF-16 surrogates
-- (U+D800-U+DFFF, "\237" followed by "\160"-"\191"), which Haskell's decoder refuses as well.
local function queryDecodes(query)
  if query:find("[%%\128-\255]") == nil then return true end
  local decoded = decodeComponent(query)
  return utf8.len(decoded) ~= nil and decoded:find("\237[\160-\191]") == nil
end

-- Hosted Supabase preloads pg-safeupdate for PostgREST's role, so an UPDATE or DELETE without a
-- WHERE clause fails with SQLSTATE 21000; Debian has no safeupdate package, so the gateway refuses
-- a table PATCH/DELETE whose query has no parameter that filters rows.
local function isUnfilteredWrite(method, path, query)
  if (method ~= "PATCH" and method ~= "DELETE") or startsWith(path, "/rpc/") then return false end
  for pair in (query or ""):gmatch("[^&]+") do
    local name = decodeComponent(pair:match("^([^=]*)"))
    if not settings.nonFilterParams[name] then return false end
  end
  return true
end

local function refuse(txn, answer, extra)
  local headers = {}
  for name, value in pairs(answer.headers) do headers[name] = { value } end
  for name, value in pairs(extra or {}) do headers[name] = { value } end
  txn:done(txn:reply({ status = answer.status, headers = headers, body = answer.body }))
end

core.register_action("orbita_gateway", { "http-req" }, function(txn)
  local fetch = txn.f
  local method = fetch:method()
  local path = fetch:path() or "/"
  -- A request head over the cap is refused before any service sees it, with an empty 431. The
  -- head is counted as node counted it: the request line's parts plus each header's name, value
  -- and four bytes (req.hdrs gives "name: value\r\n" for each header and a closing "\r\n").
  local headBytes = #method + #(fetch:url() or "") + 10 + #fetch:req_hdrs()
  if headBytes > settings.maxHeadBytes then return refuse(txn, settings.answers.headTooLarge) end
  local requestId, requestIdCount = header(fetch, "x-request-id")
  if requestId == nil then requestId = fetch:uuid() end
  txn:set_var("txn.request_id", requestId)
  local host = header(fetch, "host")
  local upstream, upstreamPath, translateKeys = route(path, host)
  if upstream == nil then return refuse(txn, settings.answers.noRoute) end
  local answers = settings.answers[upstream]
  -- Edge functions answer their own preflights on Supabase; Kong answers the other services'.
  if method == "OPTIONS" and upstream ~= "functions" then return refuse(txn, settings.answers.preflight) end

  local sentAuthorization, authorizationCount = header(fetch, "authorization")
  local authorization = sentAuthorization
  if translateKeys then authorization = translateAuthorization(authorization, (header(fetch, "apikey"))) end
  local claims = nil
  if upstream ~= "storage" then claims = bearerClaims(authorization) end
  local role = claims and claims.role
  -- pg-meta reads and changes the whole database as `postgres`: as Kong's key-auth and acl plugins
  -- do for `supabase start`, only the service_role key (Studio's) gets through.
  if upstream == "meta" and role ~= "service_role" then
    return refuse(txn, authorization == nil and answers.noApiKey or answers.forbidden)
  end
  local client = clientAddress(fetch)
  -- The service_role key is a server secret held by trusted back-office code (functions, workers),
  -- not a client; its calls all come from this machine and would otherwise share one budget.
  if settings.rateLimits[upstream] ~= nil and role ~= "service_role" then
    local caller = (claims and claims.sub) and ("sub:" .. claims.sub) or ("ip:" .. client)
    local allowed, resetSeconds = hit(upstream, caller)
    if not allowed then
      return refuse(txn, answers.rateLimited, { ["retry-after"] = tostring(resetSeconds) })
    end
  end
  if upstream == "rest" then
    local query = fetch:query()
    if query ~= nil and not queryDecodes(query) then return refuse(txn, answers.queryNotUtf8) end
    if isUnfilteredWrite(method, upstreamPath, query) then
      return refuse(txn, method == "PATCH" and answers.unfilteredUpdate or answers.unfilteredDelete)
    end
  end
  if method ~= "GET" and method ~= "HEAD" then
    local declared = header(fetch, "content-length")
    local length = tonumber(declared or "0")
    if length ~= nil and length > settings.bodyLimits[upstream] then
      -- Answered by orbita_too_large once the body is read: a client still sending it when the
      -- connection closed would see a broken pipe instead of the answer.
      txn:set_var("txn.too_large", upstream)
      return
    end
    -- PostgREST reads a body whole, however long; one of unknown length (chunked) goes through the
    -- node half, which counts it against the cap as it arrives (auth and storage are served there
    -- already, and functions count their own).
    if declared == nil and upstream == "rest" and fetch:req_fhdr_cnt("transfer-encoding") > 0 then upstream = "rest_counted" end
  end

  -- Headers are rewritten only where they change: the fixed ones (accept-encoding,
  -- x-forwarded-*, x-orbita-service, the gateway's credential) are set by native rules after this
  -- action in haproxy.cfg.
  if authorization == nil then
    if sentAuthorization ~= nil then txn.http:req_del_header("authorization") end
  elseif authorization ~= sentAuthorization or authorizationCount > 1 then
    txn.http:req_set_header("authorization", authorization)
  end
  if requestIdCount ~= 1 then txn.http:req_set_header("x-request-id", requestId) end
  txn:set_var("txn.client", client)
  txn.http:req_set_path(upstreamPath)
  txn:set_var("txn.upstream", upstream)
end)

-- The 413 answer of a request whose Content-Length is over its cap: the body is read and thrown
-- away first (up to the length declared), then the connection is closed.
core.register_service("orbita_too_large", "http", function(applet)
  local answer = settings.answers[applet:get_var("txn.too_large")].tooLarge
  repeat
    local chunk = applet:receive(65536)
  until chunk == nil or chunk == ""
  applet:set_status(answer.status)
  for name, value in pairs(answer.headers) do applet:add_header(name, value) end
  applet:add_header("content-length", tostring(#answer.body))
  applet:start_response()
  applet:send(answer.body)
end)
