/** A data file that cannot be served; the message names the file and the line or entry. */
export class DataFileError extends Error {
  override name = 'DataFileError'

  constructor (readonly file: string, readonly where: string, readonly reason: string) {
    super(`${file}: ${where}: ${reason}`)
  }
}
