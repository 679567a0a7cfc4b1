// The errors the simulated API server answers with, worded like the real kube-apiserver
// (k8s.io/apimachinery/pkg/api/errors/errors.go: NewNotFound, NewAlreadyExists, NewConflict, NewInvalid,
// NewForbidden, ...), and their `Status` bodies.
import type { ResourceType } from '../../../src/cluster/types';
import { SimApiError } from '../store-types';
import { formatFieldError, type FieldError } from '../crd-schema';

export { SimApiError };

/** `nodes`, `ingresses.config.openshift.io`: how the server names a resource in messages. */
export function qualifiedResource(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

/** `Secret`, `Ingress.config.openshift.io`: how NewInvalid names a kind. */
export function qualifiedKind(type: ResourceType): string {
  return type.group ? `${type.kind}.${type.group}` : type.kind;
}

export function notFound(type: ResourceType, name: string): SimApiError {
  return new SimApiError(404, 'NotFound', `${qualifiedResource(type)} "${name}" not found`, { name, group: type.group, kind: type.plural });
}

/** 404 for a path nothing serves (e.g. ImageDigestMirrorSets on OpenShift < 4.13: no such CRD). */
export function noSuchResource(): SimApiError {
  return new SimApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(type: ResourceType, name: string): SimApiError {
  return new SimApiError(409, 'AlreadyExists', `${qualifiedResource(type)} "${name}" already exists`, { name, group: type.group, kind: type.plural });
}

export function conflict(type: ResourceType, name: string, detail = 'the object has been modified; please apply your changes to the latest version and try again'): SimApiError {
  return new SimApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(type)} "${name}": ${detail}`, { name, group: type.group, kind: type.plural });
}

export function invalid(type: ResourceType, name: string, errors: FieldError[]): SimApiError {
  // Aggregate.Error(): one message as is, several as "[a, b]"; duplicates dropped (field.ErrorList.ToAggregate).
  const lines = [...new Set(errors.map(formatFieldError))];
  const summary = lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`;
  return new SimApiError(422, 'Invalid', `${qualifiedKind(type)} "${name}" is invalid: ${summary}`, {
    name,
    group: type.group,
    kind: type.kind,
    causes: errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field })),
  });
}

export function badRequest(message: string): SimApiError {
  return new SimApiError(400, 'BadRequest', message);
}

export function forbidden(user: string, verb: string, type: ResourceType, resource: string, name: string | undefined, namespace: string | undefined): SimApiError {
  const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
  const subject = name ? `${qualifiedResource(type)} "${name}"` : qualifiedResource(type);
  return new SimApiError(
    403,
    'Forbidden',
    `${subject} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${type.group}" ${scope}`,
    { name, group: type.group, kind: type.plural },
  );
}

export function unauthorized(): SimApiError {
  return new SimApiError(401, 'Unauthorized', 'Unauthorized');
}

export function methodNotAllowed(): SimApiError {
  return new SimApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

export function unsupportedMediaType(accepted: string[]): SimApiError {
  return new SimApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

export function expired(requested: string, oldest: string): SimApiError {
  return new SimApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);
}

export function serviceUnavailable(): SimApiError {
  return new SimApiError(503, 'ServiceUnavailable', 'the server is currently unable to handle the request', {});
}

export function internalError(message: string): SimApiError {
  return new SimApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ field: '', message }] });
}

/** The `Status` body of an error, as the server sends it. */
export function statusBody(err: SimApiError): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: err.reason };
  if (err.details) {
    const details: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(err.details)) if (v !== undefined && v !== '') details[k] = v;
    body.details = details;
  }
  body.code = err.code;
  return body;
}

export function successStatus(type: ResourceType, name: string, uid: string | undefined): Record<string, unknown> {
  const details: Record<string, unknown> = { name, kind: type.plural };
  if (type.group) details.group = type.group;
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
