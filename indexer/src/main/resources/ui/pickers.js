// Model and tenant pickers filled from /stats, shared by the Query and Cache map views.

import { h, replace, natural } from './dom.js';

/** Fills both selects; keeps (or applies) `wanted` {model_name, tenant_id} when it exists, else picks the first. */
export function fillPickers(modelSelect, tenantSelect, indexes, wanted = {}) {
  const models = [...new Set(indexes.map((ix) => ix.model_name))].sort(natural);
  const model = pick(models, wanted.model_name ?? modelSelect.value);
  // a deep link may name an index this replica does not have (yet): keep it selectable, the query says 404
  if (model === undefined && wanted.model_name) models.push(wanted.model_name);
  const chosenModel = model ?? wanted.model_name ?? models[0];
  setOptions(modelSelect, models, chosenModel ?? '');
  fillTenants(tenantSelect, indexes, modelSelect.value, wanted.tenant_id ?? tenantSelect.value);
}

export function fillTenants(tenantSelect, indexes, model, wantedTenant) {
  const tenants = [...new Set(indexes.filter((ix) => ix.model_name === model).map((ix) => ix.tenant_id))]
    .sort(natural);
  if (wantedTenant && !tenants.includes(wantedTenant)) tenants.push(wantedTenant);
  if (!tenants.length) tenants.push('default');
  const chosen = tenants.includes(wantedTenant) ? wantedTenant : tenants[0];
  setOptions(tenantSelect, tenants, chosen);
}

/** Rebuilds a select only when its choices changed (a refresh must not close a list the user has open). */
function setOptions(select, values, chosen) {
  const current = [...select.options].map((o) => o.value);
  if (current.length !== values.length || current.some((v, i) => v !== values[i])) {
    replace(select, values.map((v) => h('option', { value: v }, v)));
  }
  select.value = chosen;
}

function pick(list, value) {
  return value && list.includes(value) ? value : undefined;
}
