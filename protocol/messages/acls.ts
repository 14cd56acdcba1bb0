import { api, array, field, message, type ApiSpec, type FieldSpec } from '../schema/types.js';

/** The filter fields DescribeAcls sends at top level and DeleteAcls sends per filter (same names, same versions). */
function aclFilterFields(): FieldSpec[] {
  return [
    field('resourceTypeFilter', 'int8', '0+'),
    field('resourceNameFilter', 'string', '0+', { nullableVersions: '0+' }),
    field('patternTypeFilter', 'int8', '1+', { default: 3 }),
    field('principalFilter', 'string', '0+', { nullableVersions: '0+' }),
    field('hostFilter', 'string', '0+', { nullableVersions: '0+' }),
    field('operation', 'int8', '0+'),
    field('permissionType', 'int8', '0+'),
  ];
}

/** DescribeAcls (29): the ACL bindings matching one filter, grouped by resource pattern (kafka-acls --list). */
export const DESCRIBE_ACLS: ApiSpec = api(
  message({
    apiKey: 29,
    name: 'DescribeAcls',
    type: 'request',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: aclFilterFields(),
  }),
  message({
    apiKey: 29,
    name: 'DescribeAcls',
    type: 'response',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('errorCode', 'int16', '0+'),
      field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
      field('resources', array([
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        field('patternType', 'int8', '1+', { default: 3 }),
        field('acls', array([
          field('principal', 'string', '0+'),
          field('host', 'string', '0+'),
          field('operation', 'int8', '0+'),
          field('permissionType', 'int8', '0+'),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
);

/** CreateAcls (30): adds ACL bindings, one result per creation in request order (kafka-acls --add). */
export const CREATE_ACLS: ApiSpec = api(
  message({
    apiKey: 30,
    name: 'CreateAcls',
    type: 'request',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      field('creations', array([
        field('resourceType', 'int8', '0+'),
        field('resourceName', 'string', '0+'),
        field('resourcePatternType', 'int8', '1+', { default: 3 }),
        field('principal', 'string', '0+'),
        field('host', 'string', '0+'),
        field('operation', 'int8', '0+'),
        field('permissionType', 'int8', '0+'),
      ]), '0+'),
    ],
  }),
  message({
    apiKey: 30,
    name: 'CreateAcls',
    type: 'response',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('results', array([
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
      ]), '0+'),
    ],
  }),
);

/** DeleteAcls (31): removes the bindings matching each filter and returns them (kafka-acls --remove). */
export const DELETE_ACLS: ApiSpec = api(
  message({
    apiKey: 31,
    name: 'DeleteAcls',
    type: 'request',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [field('filters', array(aclFilterFields()), '0+')],
  }),
  message({
    apiKey: 31,
    name: 'DeleteAcls',
    type: 'response',
    validVersions: '0-3',
    flexibleVersions: '2+',
    fields: [
      field('throttleTimeMs', 'int32', '0+'),
      field('filterResults', array([
        field('errorCode', 'int16', '0+'),
        field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
        field('matchingAcls', array([
          field('errorCode', 'int16', '0+'),
          field('errorMessage', 'string', '0+', { nullableVersions: '0+' }),
          field('resourceType', 'int8', '0+'),
          field('resourceName', 'string', '0+'),
          field('patternType', 'int8', '1+', { default: 3 }),
          field('principal', 'string', '0+'),
          field('host', 'string', '0+'),
          field('operation', 'int8', '0+'),
          field('permissionType', 'int8', '0+'),
        ]), '0+'),
      ]), '0+'),
    ],
  }),
);
