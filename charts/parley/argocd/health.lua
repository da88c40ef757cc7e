-- Argo CD health of Parley's custom resources (chat.parley.dev: Plan, ChatRuntime, Merchant, APIKey, Webhook,
-- KnowledgeSource).
-- The operator reports every kind through one Ready condition, whose reason says why it is not Ready; this
-- script maps them, the same for all six kinds (docs/operating.md, "Argo CD"):
--   no status yet, or status or Ready behind metadata.generation   Progressing
--   Ready=True (Reconciled, and Suspended, OwnersNotAllowed, Disabled, which stay Ready)   Healthy
--   Ready=False with a reason that resolves without anyone's change   Progressing
--   Ready=False with any other reason, one this script does not know included   Degraded
--   Ready=Unknown   Progressing
-- The message is the Ready condition's, after its reason. Argo CD runs scripts from argocd-cm without Lua's
-- standard libraries: only the base functions are used here, no string or os.

-- A referenced object that does not exist yet (GitOps creates it in another sync or wave, External Secrets
-- writes a Secret later), a runtime's pods that are starting, or a knowledge source's first sync: the reasons of the operator's
-- ReasonResolvesItself (api/v1alpha1/conditions.go), which sets Reconciling for them and Stalled for the others
-- (test/gitops checks that the two lists agree).
local transient = {
  PlanNotFound = true,
  RuntimeNotFound = true,
  MerchantNotFound = true,
  SecretNotFound = true,
  DeploymentNotReady = true,
  Syncing = true,
}

local function progressing(message)
  return {status = "Progressing", message = message}
end

local generation = obj.metadata.generation or 0
if obj.status == nil then
  return progressing("Waiting for the Parley operator to report")
end
if (obj.status.observedGeneration or 0) < generation then
  return progressing("Waiting for the Parley operator to reconcile generation " .. tostring(generation))
end

local ready = nil
for _, condition in ipairs(obj.status.conditions or {}) do
  if condition.type == "Ready" then
    ready = condition
  end
end
if ready == nil then
  return progressing("Waiting for the Parley operator to report")
end
if (ready.observedGeneration or 0) < generation then
  return progressing("Waiting for the Parley operator to reconcile generation " .. tostring(generation))
end

local message = (ready.reason or "") .. ": " .. (ready.message or "")
if ready.status == "True" then
  return {status = "Healthy", message = message}
end
if ready.status == "False" and not transient[ready.reason] then
  return {status = "Degraded", message = message}
end
return progressing(message)
