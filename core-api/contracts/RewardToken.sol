// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";

/// @title PTS reward token
/// @notice Whole-point loyalty rewards: 0 decimals, gasless approvals (EIP-2612), minted only by the minter role.
/// Rewards a brand reverses (a refunded order, a correction) are taken back by the reverser role: points are the
/// brand's liability, as at every loyalty program, and the platform that issued them may cancel them. A reversal
/// takes at most what the wallet holds, so a balance never goes below zero; the rest is the platform's to record
/// as the member's debt (docs/shop-program.md). Each reversal id is applied once: the token records what it took,
/// so a reversal sent again (a transaction that landed without a receipt the platform could see) burns nothing.
contract RewardToken is ERC20, ERC20Permit, AccessControl {
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");
    bytes32 public constant REVERSER_ROLE = keccak256("REVERSER_ROLE");

    /// @dev A reversal the token applied, and what it took then (`taken` fits: it is at most a balance).
    struct AppliedReversal {
        bool applied;
        uint248 taken;
    }

    /// @dev Reversal id => whether it was applied and what it took. Written once, never cleared.
    mapping(bytes32 => AppliedReversal) private _reversals;

    /// @notice `taken` of the `requested` points of reversal `reversalId` were taken back from `from` and burned;
    /// `taken < requested` when the wallet held less (the member had spent them).
    event RewardReversed(address indexed from, bytes32 indexed reversalId, uint256 requested, uint256 taken);

    /// @notice `to` and `amounts` of a batch differ in length.
    error MintBatchLengthMismatch(uint256 recipients, uint256 amounts);
    /// @notice A batch with no recipients: almost certainly a caller bug, so it is refused rather than wasting gas.
    error MintBatchEmpty();
    /// @notice `from`, `amounts` and `reversalIds` of a reversal batch differ in length.
    error ReverseBatchLengthMismatch(uint256 wallets, uint256 amounts, uint256 reversalIds);
    /// @notice A reversal batch with no wallets.
    error ReverseBatchEmpty();

    constructor(string memory name_, string memory symbol_, address admin)
        ERC20(name_, symbol_)
        ERC20Permit(name_)
    {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice Points are indivisible.
    function decimals() public pure override returns (uint8) {
        return 0;
    }

    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
        _mint(to, amount);
    }

    /// @notice Mints `amounts[i]` to `to[i]`; the minter groups many rewards into one transaction.
    function mintBatch(address[] calldata to, uint256[] calldata amounts) external onlyRole(MINTER_ROLE) {
        uint256 length = to.length;
        if (length != amounts.length) revert MintBatchLengthMismatch(length, amounts.length);
        if (length == 0) revert MintBatchEmpty();
        for (uint256 i = 0; i < length; ++i) {
            _mint(to[i], amounts[i]);
        }
    }

    /// @notice Takes back up to `amounts[i]` points from `from[i]` for reversal `reversalIds[i]`: the smaller of the
    /// amount and the wallet's balance is burned, and `RewardReversed` names both. An id applied before is skipped
    /// (no burn, no event). Never reverts for a balance, so a
    /// redemption that spent the points first leaves the rest for the platform to record as debt, and a redemption
    /// after it finds the points gone: the same points are never spent twice.
    function reverseBatch(address[] calldata from, uint256[] calldata amounts, bytes32[] calldata reversalIds)
        external
        onlyRole(REVERSER_ROLE)
    {
        uint256 length = from.length;
        if (length != amounts.length || length != reversalIds.length) {
            revert ReverseBatchLengthMismatch(length, amounts.length, reversalIds.length);
        }
        if (length == 0) revert ReverseBatchEmpty();
        for (uint256 i = 0; i < length; ++i) {
            // Applied before (by this transaction's twin, or an earlier one): skipped, not reverted, so one done id
            // never blocks the others of a batch. What it took is read with `reversalsApplied`.
            if (_reversals[reversalIds[i]].applied) continue;
            uint256 held = balanceOf(from[i]);
            uint256 taken = amounts[i] < held ? amounts[i] : held;
            _reversals[reversalIds[i]] = AppliedReversal({applied: true, taken: SafeCast.toUint248(taken)});
            if (taken > 0) _burn(from[i], taken);
            emit RewardReversed(from[i], reversalIds[i], amounts[i], taken);
        }
    }

    /// @notice For each of `reversalIds`, whether `reverseBatch` applied it and what it took then: the record a
    /// reversal sent twice is settled from (the second `reverseBatch` skips it and emits nothing for it).
    function reversalsApplied(bytes32[] calldata reversalIds)
        external
        view
        returns (bool[] memory applied, uint256[] memory taken)
    {
        uint256 length = reversalIds.length;
        applied = new bool[](length);
        taken = new uint256[](length);
        for (uint256 i = 0; i < length; ++i) {
            AppliedReversal storage record = _reversals[reversalIds[i]];
            applied[i] = record.applied;
            taken[i] = record.taken;
        }
    }
}
