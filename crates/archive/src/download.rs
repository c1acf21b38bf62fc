//! Downloads from FuelWatch's archive: a month's file streamed into a temporary file, and
//! FuelWatch's list of monthly files, each within its deadline and size bound.

use std::time::Duration;

use crate::ImportError;
use crate::list::ListedFile;

/// Limits of an archive download.
#[derive(Debug, Clone, Copy)]
pub struct DownloadLimits {
    /// For the whole download of one month.
    pub deadline: Duration,
    /// Bytes of one month's file (the largest real months are a few tens of MB).
    pub max_bytes: u64,
}

impl Default for DownloadLimits {
    fn default() -> Self {
        Self { deadline: Duration::from_secs(300), max_bytes: 256 * 1024 * 1024 }
    }
}

/// A month's file streamed into a temporary file (never held whole in memory); `None` when
/// the archive has no such month (404).
pub async fn download_month(
    http: &reqwest::Client,
    base: &url::Url,
    (year, month): (i16, i8),
    limits: DownloadLimits,
) -> Result<Option<std::fs::File>, ImportError> {
    let name = crate::month_file(year, month);
    let url =
        base.join(&name).map_err(|e| ImportError::Download { file: name.clone(), reason: e.to_string() })?;
    download(http, &name, url, limits).await
}

/// The file at `url` (named `name` in errors), streamed into a temporary file; `None` on 404.
pub(crate) async fn download(
    http: &reqwest::Client,
    name: &str,
    url: url::Url,
    limits: DownloadLimits,
) -> Result<Option<std::fs::File>, ImportError> {
    use std::io::{Seek, Write};
    let fail = |reason: String| ImportError::Download { file: name.to_string(), reason };
    let work = async {
        let mut response = http.get(url).send().await.map_err(|e| fail(e.to_string()))?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(fail(format!("HTTP {}", response.status())));
        }
        let mut file = tempfile::tempfile().map_err(|e| fail(e.to_string()))?;
        let mut size = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
            size += chunk.len() as u64;
            if size > limits.max_bytes {
                return Err(fail(format!("larger than {} bytes", limits.max_bytes)));
            }
            file.write_all(&chunk).map_err(|e| fail(e.to_string()))?;
        }
        file.rewind().map_err(|e| fail(e.to_string()))?;
        Ok(Some(file))
    };
    tokio::time::timeout(limits.deadline, work).await.map_err(|_| fail("timed out".into()))?
}

/// The HTTP client for archive downloads (`outbound_client`, connecting within 30 s).
pub fn http_client(limits: DownloadLimits) -> Result<reqwest::Client, reqwest::Error> {
    wafuel_source::client::outbound_client()
        .connect_timeout(limits.deadline.min(Duration::from_secs(30)))
        .build()
}

/// The list is a few hundred short entries; anything much larger is not the list.
const MAX_LIST_BYTES: usize = 4 * 1024 * 1024;

/// Read FuelWatch's list of monthly files at `url`, with the download's limits.
pub async fn read_list(
    http: &reqwest::Client,
    url: &url::Url,
    limits: DownloadLimits,
) -> Result<Vec<ListedFile>, ImportError> {
    let fail = |reason: String| ImportError::Download { file: url.to_string(), reason };
    let work = async {
        let response = http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !response.status().is_success() {
            return Err(fail(format!("HTTP {}", response.status())));
        }
        use wafuel_source::client::{BodyError, body_within};
        let body = match body_within(response, MAX_LIST_BYTES).await {
            Ok(body) => body,
            Err(BodyError::TooLarge) => return Err(fail(format!("larger than {MAX_LIST_BYTES} bytes"))),
            Err(BodyError::Read(why)) => return Err(fail(why)),
        };
        serde_json::from_slice::<Vec<ListedFile>>(&body).map_err(|e| fail(format!("not the file list: {e}")))
    };
    tokio::time::timeout(limits.deadline.min(std::time::Duration::from_secs(60)), work)
        .await
        .map_err(|_| fail("timed out".into()))?
}
