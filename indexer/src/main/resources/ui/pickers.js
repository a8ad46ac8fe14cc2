// Model and tenant pickers filled from /stats, shared by the Query and Cache map views.

import { h, replace } from './dom.js';

/** Fills both selects; keeps (or applies) `wanted` {model_name, tenant_id} when it exists, else picks the first. */
export function fillPickers(modelSelect, tenantSelect, indexes, wanted = {}) {
  const models = [...new Set(indexes.map((ix) => ix.model_name))].sort();
  const model = pick(models, wanted.model_name ?? modelSelect.value);
  // a deep link may name an index this replica does not have (yet): keep it selectable, the query says 404
  if (model === undefined && wanted.model_name) models.push(wanted.model_name);
  const chosenModel = model ?? wanted.model_name ?? models[0];
  replace(modelSelect, models.map((m) => h('option', { value: m, selected: m === chosenModel }, m)));
  modelSelect.value = chosenModel ?? '';
  fillTenants(tenantSelect, indexes, modelSelect.value, wanted.tenant_id ?? tenantSelect.value);
}

export function fillTenants(tenantSelect, indexes, model, wantedTenant) {
  const tenants = [...new Set(indexes.filter((ix) => ix.model_name === model).map((ix) => ix.tenant_id))].sort();
  if (wantedTenant && !tenants.includes(wantedTenant)) tenants.push(wantedTenant);
  if (!tenants.length) tenants.push('default');
  const chosen = tenants.includes(wantedTenant) ? wantedTenant : tenants[0];
  replace(tenantSelect, tenants.map((t) => h('option', { value: t, selected: t === chosen }, t)));
  tenantSelect.value = chosen;
}

function pick(list, value) {
  return value && list.includes(value) ? value : undefined;
}
