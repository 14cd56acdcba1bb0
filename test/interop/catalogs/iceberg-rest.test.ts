// Floe with Apache Iceberg's own REST catalog server (org.apache.iceberg.rest.RESTCatalogServer from Maven
// Central, over a SQLite JdbcCatalog, its warehouse on moto's S3 server) as the external catalog: the external
// catalog suite (external-suite.ts), with OAuth2 client credentials from the server's own /v1/oauth/tokens.
import { startIcebergRestServer } from './iceberg-rest-server.js';
import { externalCatalogSuite } from './external-suite.js';

externalCatalogSuite({
  name: 'Apache Iceberg RESTCatalogServer',
  start: (s3, dir, bucket) => startIcebergRestServer(s3, { dir, bucket }),
  oauth: true,
});
