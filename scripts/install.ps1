# Installs the `interpreter` release binary for Windows (x86_64):
#
#   irm https://github.com/openinterpreter/interpreter/releases/latest/download/install.ps1 | iex
#
# It downloads $Base/v<version>/interpreter-v<version>-x86_64-pc-windows-msvc.zip and
# $Base/v<version>/SHA256SUMS, refuses the archive unless its SHA-256 is the one listed, checks
# that the new binary runs (`--version`) before it replaces anything, and installs into
# %LOCALAPPDATA%\Programs\interpreter\bin, which it adds to the user's PATH. Environment, as
# for install.sh:
#
#   INTERPRETER_VERSION        a version to pin (0.1.0 or v0.1.0); default: the latest release
#   INTERPRETER_INSTALL_DIR    where to install
#   INTERPRETER_DOWNLOAD_BASE  another download base laid out like the GitHub releases
#   INTERPRETER_TARGET         the target triple to fetch; default: x86_64-pc-windows-msvc
#
# Everything is inside Install-Interpreter, called on the last line, so a truncated download
# runs nothing.

function Install-Interpreter {
    $ErrorActionPreference = 'Stop'
    Set-StrictMode -Version 3.0
    $repo = 'openinterpreter/interpreter'
    $github = "https://github.com/$repo/releases"

    function Say([string]$message) { [Console]::Error.WriteLine("install.ps1: $message") }
    function Die([string]$message) { Say "error: $message"; exit 1 }
    function Fetch([string]$url, [string]$file) {
        try {
            Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $file
        } catch {
            Die "could not download ${url}: $($_.Exception.Message)"
        }
    }

    $target = if ($env:INTERPRETER_TARGET) { $env:INTERPRETER_TARGET } else {
        switch ([System.Runtime.InteropServices.RuntimeInformation]::OSArchitecture) {
            'X64' { 'x86_64-pc-windows-msvc' }
            # Windows on Arm runs the x64 build under emulation.
            'Arm64' { 'x86_64-pc-windows-msvc' }
            default { Die "no release build for this architecture; build from source: cargo install --locked --git https://github.com/$repo interpreter" }
        }
    }
    $dir = if ($env:INTERPRETER_INSTALL_DIR) { $env:INTERPRETER_INSTALL_DIR } else {
        Join-Path $env:LOCALAPPDATA 'Programs\interpreter\bin'
    }
    $base = $env:INTERPRETER_DOWNLOAD_BASE
    $version = if ($env:INTERPRETER_VERSION) { $env:INTERPRETER_VERSION } else { 'latest' }

    $tmp = Join-Path ([System.IO.Path]::GetTempPath()) ("interpreter-install-" + [guid]::NewGuid())
    New-Item -ItemType Directory -Path $tmp | Out-Null
    try {
        if ($version -eq 'latest') {
            $latestUrl = if ($base) { "$base/latest" } else { "$github/latest/download/latest" }
            Fetch $latestUrl (Join-Path $tmp 'latest')
            $version = (Get-Content -Raw (Join-Path $tmp 'latest')).Trim()
            if (-not $version) { Die "$latestUrl is empty" }
        }
        $version = $version -replace '^v', ''
        if ($version -notmatch '^[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*$') {
            Die "not a version: '$version' (INTERPRETER_VERSION is like 0.1.0)"
        }
        if (-not $base) { $base = "$github/download" }

        $archive = "interpreter-v$version-$target.zip"
        Say "installing interpreter $version ($target) into $dir"
        $zip = Join-Path $tmp $archive
        $sums = Join-Path $tmp 'SHA256SUMS'
        Fetch "$base/v$version/$archive" $zip
        Fetch "$base/v$version/SHA256SUMS" $sums

        $expected = $null
        foreach ($line in Get-Content $sums) {
            $parts = $line -split '\s+', 2
            if ($parts.Count -eq 2 -and $parts[1].TrimStart('*') -eq $archive) {
                $expected = $parts[0].ToLowerInvariant()
                break
            }
        }
        if (-not $expected) { Die "SHA256SUMS of v$version lists no $archive; refusing to install" }
        $actual = (Get-FileHash -Algorithm SHA256 $zip).Hash.ToLowerInvariant()
        if ($actual -ne $expected) {
            Die "checksum mismatch for ${archive}: SHA256SUMS says $expected, the download is $actual; refusing to install"
        }

        $unpacked = Join-Path $tmp 'x'
        Expand-Archive -Path $zip -DestinationPath $unpacked
        $new = Join-Path $unpacked 'interpreter.exe'
        if (-not (Test-Path -LiteralPath $new -PathType Leaf)) { Die "$archive holds no interpreter.exe" }
        # The new binary must run before it replaces a working one.
        $answer = & $new --version 2>&1
        if ($LASTEXITCODE -ne 0 -or "$answer" -ne "interpreter $version") {
            Die "the downloaded interpreter.exe does not run ('$answer'); nothing was replaced"
        }

        New-Item -ItemType Directory -Force -Path $dir | Out-Null
        $dest = Join-Path $dir 'interpreter.exe'
        $staged = Join-Path $dir ".interpreter.new.$PID.exe"
        Copy-Item -LiteralPath $new -Destination $staged -Force
        # A running interpreter.exe cannot be overwritten, but it can be renamed out of the way.
        if (Test-Path -LiteralPath $dest) {
            $old = Join-Path $dir ".interpreter.old.$PID.exe"
            Move-Item -LiteralPath $dest -Destination $old -Force
            Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue
        }
        Move-Item -LiteralPath $staged -Destination $dest -Force
        Say "installed interpreter $version at $dest"

        $userPath = [Environment]::GetEnvironmentVariable('Path', 'User')
        $entries = @($userPath -split ';' | Where-Object { $_ })
        if ($entries -notcontains $dir) {
            [Environment]::SetEnvironmentVariable('Path', (($entries + $dir) -join ';'), 'User')
            Say "added `"$dir`" to your user PATH; open a new terminal to use ``interpreter``"
        }
    } finally {
        Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
    }
}

Install-Interpreter
