export { startS3Server, type S3ServerOptions, type S3TestServer } from './s3-server.ts';
