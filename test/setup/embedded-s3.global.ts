// Placeholder until the embedded S3 endpoint lands: provides nothing.
export default function setup(): void {}
